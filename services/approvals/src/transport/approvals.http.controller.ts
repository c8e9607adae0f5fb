import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  APPROVALS_DECIDE_V1,
  APPROVALS_LIST_V1,
  assertValid,
  type DecideApprovalRequestV1,
  type ListApprovalsRequestV1,
} from '@ormuz/contracts';
import { DecideApprovalCommand } from '../commands/decide-approval.handler.js';
import { ListApprovalsQuery } from '../queries/list-approvals.handler.js';

/**
 * The owner's HTTP API. Path parameters and body are merged and checked against the same wire schemas as the NATS
 * commands; errors map to statuses in OrmuzExceptionFilter.
 */
@Controller('v1/tenants/:tenant/approvals')
export class ApprovalsHttpController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  list(@Param('tenant') tenant: string, @Query('status') status?: string) {
    const request = assertValid<ListApprovalsRequestV1>(APPROVALS_LIST_V1, { tenant, ...(status ? { status } : {}) });
    return this.queries.execute(new ListApprovalsQuery(request));
  }

  @Post(':approvalId/approve')
  @HttpCode(200)
  approve(@Param('tenant') tenant: string, @Param('approvalId') approvalId: string, @Body() body: unknown) {
    return this.decide('approve', tenant, approvalId, body);
  }

  @Post(':approvalId/deny')
  @HttpCode(200)
  deny(@Param('tenant') tenant: string, @Param('approvalId') approvalId: string, @Body() body: unknown) {
    return this.decide('deny', tenant, approvalId, body);
  }

  private decide(decision: 'approve' | 'deny', tenant: string, approvalId: string, body: unknown) {
    const fields = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
    const request = assertValid<DecideApprovalRequestV1>(APPROVALS_DECIDE_V1, { ...fields, tenant, approval_id: approvalId });
    return this.commands.execute(new DecideApprovalCommand(decision, request));
  }
}
