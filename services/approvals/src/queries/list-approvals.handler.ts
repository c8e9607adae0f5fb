import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ApprovalViewV1, ListApprovalsRequestV1 } from '@ormuz/contracts';
import { InboxRepository, toView } from '../persistence/inbox.repository.js';

export class ListApprovalsQuery extends Query<{ approvals: ApprovalViewV1[] }> {
  constructor(
    readonly request: ListApprovalsRequestV1,
    /** An owner who decides for named agents sees only their approvals. */
    readonly agents?: readonly string[],
  ) {
    super();
  }
}

@QueryHandler(ListApprovalsQuery)
export class ListApprovalsHandler implements IQueryHandler<ListApprovalsQuery> {
  constructor(private readonly inbox: InboxRepository) {}
  async execute({ request, agents }: ListApprovalsQuery) {
    const rows = await this.inbox.list(request.tenant, request.status ?? 'pending', agents);
    return { approvals: rows.map(toView) };
  }
}
