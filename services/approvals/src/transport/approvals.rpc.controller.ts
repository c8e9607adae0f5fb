import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from '@ormuz/service-kit';
import { DecideApprovalCommand } from '../commands/decide-approval.handler.js';
import { ListApprovalsQuery } from '../queries/list-approvals.handler.js';

/** NATS commands: `approvals.list`, `approvals.approve`, `approvals.deny`. */
@Controller()
export class ApprovalsRpcController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Rpc('approvals.list')
  list(request: RpcRequestOf<'approvals.list'>) {
    return this.queries.execute(new ListApprovalsQuery(request));
  }

  @Rpc('approvals.approve')
  approve(request: RpcRequestOf<'approvals.approve'>) {
    return this.commands.execute(new DecideApprovalCommand('approve', request));
  }

  @Rpc('approvals.deny')
  deny(request: RpcRequestOf<'approvals.deny'>) {
    return this.commands.execute(new DecideApprovalCommand('deny', request));
  }
}
