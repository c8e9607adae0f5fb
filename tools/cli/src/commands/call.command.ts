import type { Command } from 'commander';
import type { CallStatusReplyV1, SealCallReplyV1, SubmitCallReplyV1, SubmitCallRequestV1 } from '@ormuz/contracts';
import { submitUnansweredHint } from '@ormuz/service-kit/client';
import { identifier, parseJsonObjectOption, type CliContext } from '../context.js';

function renderStatus(r: CallStatusReplyV1): string {
  const lines = Object.entries(r.status).map(
    ([k, v]) => `  ${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
  );
  if (r.timeline) {
    lines.push('  timeline:');
    for (const t of r.timeline) lines.push(`    #${t.seq} ${t.time} ${t.type} (${t.source})`);
  }
  return lines.join('\n');
}

export function registerCallCommands(program: Command, ctx: () => CliContext): void {
  const call = program.command('call').description('submit, inspect and seal tool calls');

  call
    .command('submit')
    .description('hand one tool request to the policy gate (as an API caller with an operation id)')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--tool <name>', 'tool name, e.g. device.send_message')
    .requiredOption(
      '--operation-id <id>',
      'your idempotency key: the call id is derived from it',
      identifier('--operation-id'),
    )
    .option('--args <json>', 'arguments as a JSON object', '{}')
    .option('--agent <id>', 'agent id', identifier('--agent'), 'cli')
    .option('--device <id>', 'device the call acts on', identifier('--device'))
    .action(
      async (o: {
        tenant: string;
        tool: string;
        operationId: string;
        args: string;
        agent: string;
        device?: string;
      }) => {
        const request: SubmitCallRequestV1 = {
          tenant: o.tenant,
          agent_id: o.agent,
          tool: o.tool,
          arguments: parseJsonObjectOption('args', o.args),
          origin: { kind: 'operation', operation_id: o.operationId },
          device_id: o.device ?? null,
          correlation_id: o.operationId,
        };
        const reply = await ctx().call('policy.submit', request, {
          ifUnanswered: submitUnansweredHint(request),
        });
        ctx().print(reply, (r: SubmitCallReplyV1) =>
          [
            `call ${r.call_id}: ${r.status}${r.duplicate ? ' (duplicate: observed the original, nothing ran again)' : ''}`,
            r.message ? `  ${r.message}` : '',
            r.approval_id ? `  approval ${r.approval_id}: ${r.summary} (expires ${r.expires_at})` : '',
          ]
            .filter(Boolean)
            .join('\n'),
        );
      },
    );

  call
    .command('status')
    .description("read a call's status from the log (never contacts an executor)")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--call <id>', 'call id', identifier('--call'))
    .option('--timeline', 'include every event of the call')
    .action(async (o: { tenant: string; call: string; timeline?: boolean }) => {
      const reply = await ctx().call('policy.status', {
        tenant: o.tenant,
        call_id: o.call,
        timeline: Boolean(o.timeline),
      });
      ctx().print(reply, renderStatus);
    });

  call
    .command('seal')
    .description('make sure a call that has not started never runs')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--call <id>', 'call id', identifier('--call'))
    .option('--reason <text>', 'why', 'sealed from the CLI')
    .action(async (o: { tenant: string; call: string; reason: string }) => {
      // Who seals it is the token's subject, as recorded on the log.
      const reply = await ctx().call('policy.seal', {
        tenant: o.tenant,
        call_id: o.call,
        reason: o.reason,
      });
      ctx().print(reply, (r: SealCallReplyV1) => `call ${o.call}: ${r.status}\n  ${r.message}`);
    });
}
