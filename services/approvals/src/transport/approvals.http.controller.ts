import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Identity } from '@ormuz/auth';
import { BearerAuthGuard, Caller, checkRequest } from '@ormuz/service-kit';
import { DecideApprovalCommand } from '../commands/decide-approval.handler.js';
import { ListApprovalsQuery } from '../queries/list-approvals.handler.js';
import { ownerAgents } from './approvals.rpc.controller.js';

/**
 * The owner's HTTP API. The caller presents `Authorization: Bearer <token>`; path parameters and body are merged and
 * checked (access table, then the same wire schemas as the NATS commands); errors map to statuses in
 * OrmuzExceptionFilter (401 without a valid credential, 403 for another tenant or role).
 */
@Controller('v1/tenants/:tenant/approvals')
@UseGuards(BearerAuthGuard)
export class ApprovalsHttpController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  list(@Caller() caller: Identity | undefined, @Param('tenant') tenant: string, @Query('status') status?: string) {
    const request = checkRequest('approvals.list', caller, { tenant, ...(status ? { status } : {}) });
    return this.queries.execute(new ListApprovalsQuery(request, ownerAgents(caller!)));
  }

  @Post(':approvalId/approve')
  @HttpCode(200)
  approve(
    @Caller() caller: Identity | undefined,
    @Param('tenant') tenant: string,
    @Param('approvalId') approvalId: string,
    @Body() body: unknown,
  ) {
    const request = checkRequest('approvals.approve', caller, decideBody(tenant, approvalId, body));
    return this.commands.execute(new DecideApprovalCommand('approve', request, caller!));
  }

  @Post(':approvalId/deny')
  @HttpCode(200)
  deny(
    @Caller() caller: Identity | undefined,
    @Param('tenant') tenant: string,
    @Param('approvalId') approvalId: string,
    @Body() body: unknown,
  ) {
    const request = checkRequest('approvals.deny', caller, decideBody(tenant, approvalId, body));
    return this.commands.execute(new DecideApprovalCommand('deny', request, caller!));
  }
}

function decideBody(tenant: string, approvalId: string, body: unknown): object {
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
  return { ...fields, tenant, approval_id: approvalId };
}
