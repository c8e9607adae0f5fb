import type { Command } from 'commander';
import type { AuditEventsReplyV1 } from '@ormuz/contracts';
import { loadShippedCatalog, type Catalog, type Grant } from '@ormuz/catalog';
import { TenantAppLists, type RiskClassifierOptions } from '@ormuz/risk';
import { logPoint, type LogPoint } from '../as-of.js';
import { CliInputError, identifier, type CliContext } from '../context.js';
import {
  loadCandidateCatalog,
  loadCandidateGrants,
  loadCandidateLexicon,
  type CandidateGrants,
} from '../whatif/candidate-rules.js';
import { PastRequests, type PastRequest, type Range } from '../whatif/past-requests.js';
import { rejudge, type WhatIfReport } from '../whatif/rejudge.js';

interface WhatIfOptions {
  tenant: string;
  catalog?: string;
  grants?: string;
  riskLexicon?: string;
  from?: LogPoint;
  to?: LogPoint;
}

/**
 * `ormuz whatif`: the gate's pure decision run again over a tenant's past requests with candidate rules, printing the
 * calls whose decision would change. Read-only: it reads the audit archive (`audit.events`, tenant-scoped, analysts
 * allowed) and the tenant's current grants and app lists, and appends and sends nothing.
 */
export function registerWhatIfCommands(program: Command, ctx: () => CliContext): void {
  program
    .command('whatif')
    .description("what candidate rules would have decided for the tenant's past requests: the calls that would change")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--catalog <file>', 'candidate catalog: {"extensions": [manifests], "designer": {…}} (default: current)')
    .option('--grants <file>', 'candidate grants: {"<agent>" | "*": {"allow": […], "deny": […]}} (default: current)')
    .option('--risk-lexicon <file>', 'candidate lexicon additions: {"extra_high_risk_packages", "extra_words"}')
    .option('--from <T>', 'first request: an RFC 3339 time or a stream sequence (default: the start)', (v) =>
      logPoint('--from', v),
    )
    .option('--to <T>', 'last request: an RFC 3339 time or a stream sequence (default: now)', (v) =>
      logPoint('--to', v),
    )
    .action(async (o: WhatIfOptions) => {
      checkRange(o.from, o.to);
      // Every candidate file is read and checked before the log is.
      const candidate = {
        catalog: o.catalog ? loadCandidateCatalog(o.catalog) : undefined,
        grants: o.grants ? loadCandidateGrants(o.grants, o.tenant) : undefined,
        lexicon: o.riskLexicon ? loadCandidateLexicon(o.riskLexicon) : undefined,
      };
      const c = ctx();
      const requests = await pastRequests(c, o.tenant, {
        ...(o.from ? { from: o.from } : {}),
        ...(o.to ? { to: o.to } : {}),
      });
      const rules = await rulesFor(c, o.tenant, requests, candidate);
      c.print(rejudge(requests, rules, new Date()), renderReport);
    });
}

function checkRange(from: LogPoint | undefined, to: LogPoint | undefined): void {
  if (!from || !to) return;
  const key = (p: LogPoint) => ('seq' in p ? p.seq : p.time.getTime());
  if ('seq' in from === 'seq' in to && key(from) > key(to)) {
    throw new CliInputError('--from is after --to; give the earlier point first.');
  }
}

/** The tenant's past requests in `range` with their recorded decisions, read page by page from the audit archive. */
async function pastRequests(c: CliContext, tenant: string, range: Range): Promise<readonly PastRequest[]> {
  const past = new PastRequests(tenant, range);
  const last = range.to && 'seq' in range.to ? range.to.seq : Infinity;
  let next: number | null = range.from && 'seq' in range.from ? range.from.seq : 1;
  while (next !== null && next <= last) {
    const page: AuditEventsReplyV1 = await c.call('audit.events', { tenant, context: 'calls', from_seq: next });
    past.add(page.events);
    next = page.next_from_seq;
  }
  return past.requests();
}

/** The rules to judge with: each candidate given, else the tenant's current one (asked of policy, read-only). */
async function rulesFor(
  c: CliContext,
  tenant: string,
  requests: readonly PastRequest[],
  candidate: { catalog?: Catalog; grants?: CandidateGrants; lexicon?: RiskClassifierOptions },
) {
  const grants = new Map<string, Grant>();
  for (const agent of new Set(requests.map((r) => r.request.agent_id))) {
    const given = candidate.grants?.get(agent) ?? candidate.grants?.get('*');
    grants.set(
      agent,
      given ? { tenant, agent_id: agent, ...given } : await c.call('policy.grants.get', { tenant, agent_id: agent }),
    );
  }
  const apps = requests.length > 0 ? await c.call('policy.risk.apps.get', { tenant }) : undefined;
  return {
    catalog: candidate.catalog ?? loadShippedCatalog(),
    grantOf: (agent: string) => grants.get(agent)!,
    ...(candidate.lexicon ? { riskLexicon: candidate.lexicon } : {}),
    ...(apps && (apps.finance.length > 0 || apps.not_finance.length > 0)
      ? { apps: new TenantAppLists({ finance: apps.finance, not_finance: apps.not_finance }) }
      : {}),
  };
}

function renderReport(r: WhatIfReport): string {
  const lines = [`whatif: ${r.judged} past request(s) judged, ${r.changed.length} decision(s) would change`];
  if (r.counts.length > 0) {
    lines.push('', 'by tool and reason:');
    for (const n of r.counts) lines.push(`  ${n.calls}  ${n.tool}  ${n.from} → ${n.to}  (${n.reason})`);
    lines.push('', 'calls:');
    for (const x of r.changed) {
      lines.push(
        `  ${x.call_id}  #${x.seq} ${x.time}  ${x.agent_id}  ${x.tool}  ${x.from} → ${x.to} (${x.reason}): ${x.detail}`,
      );
    }
  }
  return lines.join('\n');
}
