import type { Command } from 'commander';
import type { AuditVerifyReplyV1, BrokenLinkV1, ChainLinkV1 } from '@ormuz/contracts';
import { identifier, type CliContext } from '../context.js';

/** Exit code of `ormuz audit verify` when the chain is broken (errors exit 1). */
export const CHAIN_BROKEN_EXIT_CODE = 3;

/** How long one page of verification may take on the server. */
const VERIFY_PAGE_MS = 60_000;

interface Verified {
  readonly tenant: string;
  readonly verified: boolean;
  readonly events: number;
  readonly head: ChainLinkV1;
  readonly broken: BrokenLinkV1 | null;
}

const human = (r: Verified): string =>
  r.broken
    ? `BROKEN: tenant ${r.tenant}'s archive chain breaks at position ${r.broken.position}` +
      `${r.broken.event_id ? ` (event ${r.broken.event_id})` : ''}: ${r.broken.reason} expected ${r.broken.expected}, ` +
      `found ${r.broken.found}. ${r.events} events before it verified.`
    : `verified: tenant ${r.tenant}'s archive chain holds ${r.events} events; head position ${r.head.position} hash ${r.head.hash}`;

/** `ormuz audit verify`: re-computes a tenant's archive hash chain, page by page on the audit service. */
export function registerAuditCommands(program: Command, ctx: () => CliContext): void {
  const audit = program.command('audit').description("check the integrity of a tenant's audit archive");

  audit
    .command('verify')
    .description(
      `re-compute the tenant's archive hash chain and name the first broken link (exit ${CHAIN_BROKEN_EXIT_CODE} when broken)`,
    )
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      const c = ctx();
      let events = 0;
      let reply: AuditVerifyReplyV1 | undefined;
      let after: ChainLinkV1 | undefined;
      do {
        reply = await c.call('audit.verify', { tenant: o.tenant, ...(after ? { after } : {}) }, VERIFY_PAGE_MS);
        events += reply.checked;
        after = reply.next ?? undefined;
      } while (after);
      const result: Verified = {
        tenant: o.tenant,
        verified: reply.broken === null,
        events,
        head: reply.last,
        broken: reply.broken,
      };
      c.print(result, human);
      if (result.broken) process.exitCode = CHAIN_BROKEN_EXIT_CODE;
    });
}
