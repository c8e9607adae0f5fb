import type { Command } from 'commander';
import type { ApprovalListV1, ApprovalViewV1 } from '@ormuz/contracts';
import { identifier, type CliContext } from '../context.js';

// Why it waits comes first among the reasons (a taint reason says what the agent had read before it asked).
export const approvalLine = (a: ApprovalViewV1) =>
  `${a.approval_id}  ${a.status.padEnd(8)}  ${a.tool}  call ${a.call_id}\n    ${a.summary}\n` +
  (a.risk_reasons.length > 0 ? `    why: ${a.risk_reasons.join('; ')}\n` : '') +
  `    expires ${a.expires_at}` +
  (a.decided_by ? `; decided by ${a.decided_by} at ${a.decided_at}` : '');

export function registerApprovalCommands(program: Command, ctx: () => CliContext): void {
  const approvals = program.command('approvals').description("the owner's inbox of staged calls");

  approvals
    .command('list')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--all', 'include decided and expired approvals')
    .action(async (o: { tenant: string; all?: boolean }) => {
      const reply = await ctx().call('approvals.list', {
        tenant: o.tenant,
        status: o.all ? 'all' : 'pending',
      });
      ctx().print(reply, (r: ApprovalListV1) =>
        r.approvals.length === 0 ? 'no approvals' : r.approvals.map(approvalLine).join('\n'),
      );
    });

  for (const decision of ['approve', 'deny'] as const) {
    approvals
      .command(`${decision} <approval-id>`)
      .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
      .option('--reason <text>', "why (deny); the model is given it as the call's result")
      .action(async (approvalId: string, o: { tenant: string; reason?: string }) => {
        identifier('<approval-id>')(approvalId);
        // Who decides is the token's subject (an owner of the tenant, or of the call's agent), never an option.
        const reply = await ctx().call(`approvals.${decision}`, {
          tenant: o.tenant,
          approval_id: approvalId,
          ...(o.reason ? { reason: o.reason } : {}),
        });
        ctx().print(reply, approvalLine);
      });
  }
}
