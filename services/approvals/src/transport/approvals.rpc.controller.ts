import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  APPROVALS_DECIDE_V1,
  APPROVALS_LIST_V1,
  assertValid,
  type DecideApprovalRequestV1,
  type ListApprovalsRequestV1,
} from '@ormuz/contracts';
import { DecideApprovalCommand } from '../commands/decide-approval.handler.js';
import { ListApprovalsQuery } from '../queries/list-approvals.handler.js';

/** NATS commands: `approvals.list`, `approvals.approve`, `approvals.deny`. */
@Controller()
export class ApprovalsRpcController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @MessagePattern('list')
  list(@Payload() body: unknown) {
    return this.queries.execute(new ListApprovalsQuery(assertValid<ListApprovalsRequestV1>(APPROVALS_LIST_V1, body)));
  }

  @MessagePattern('approve')
  approve(@Payload() body: unknown) {
    return this.commands.execute(new DecideApprovalCommand('approve', assertValid<DecideApprovalRequestV1>(APPROVALS_DECIDE_V1, body)));
  }

  @MessagePattern('deny')
  deny(@Payload() body: unknown) {
    return this.commands.execute(new DecideApprovalCommand('deny', assertValid<DecideApprovalRequestV1>(APPROVALS_DECIDE_V1, body)));
  }
}
