import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Identity } from '@ormuz/auth';
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
  list(request: RpcRequestOf<'approvals.list'>, caller: Identity) {
    return this.queries.execute(new ListApprovalsQuery(request, ownerAgents(caller)));
  }

  @Rpc('approvals.approve')
  approve(request: RpcRequestOf<'approvals.approve'>, caller: Identity) {
    return this.commands.execute(new DecideApprovalCommand('approve', request, caller));
  }

  @Rpc('approvals.deny')
  deny(request: RpcRequestOf<'approvals.deny'>, caller: Identity) {
    return this.commands.execute(new DecideApprovalCommand('deny', request, caller));
  }
}

/** The agents a caller's view of the inbox is limited to: an owner's named agents; undefined for everyone else. */
export function ownerAgents(caller: Identity): readonly string[] | undefined {
  return caller.kind === 'person' && !caller.roles.includes('admin') && caller.roles.includes('owner')
    ? caller.agents
    : undefined;
}
