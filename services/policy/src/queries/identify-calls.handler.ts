import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { IdentifyCallsReplyV1, IdentifyCallsRequestV1 } from '@ormuz/contracts';
import { identifyCall } from '../domain/identity.js';

export class IdentifyCallsQuery extends Query<IdentifyCallsReplyV1> {
  constructor(readonly request: IdentifyCallsRequestV1) {
    super();
  }
}

/** The ids and transcript names of calls not submitted yet (see domain/identity.ts). Reads and records nothing. */
@QueryHandler(IdentifyCallsQuery)
export class IdentifyCallsHandler implements IQueryHandler<IdentifyCallsQuery> {
  execute({ request }: IdentifyCallsQuery): Promise<IdentifyCallsReplyV1> {
    return Promise.resolve({ calls: request.calls.map((c) => identifyCall(request.tenant, c)) });
  }
}
