/**
 * "What if": the gate's pure decision (`decideGate`, the one policy decides every submit with) run again for past
 * requests against candidate rules. No side effects: nothing is appended or sent; the caller only reads.
 *
 * A request is judged on what its call recorded: the tool and canonical payload, the agent, and the device it was
 * aimed at. What the call did not record is not known here: a screen action's observation is replaced by the text
 * its verdict was judged on, and a conversation's taint and the owner's earlier denials are left out.
 */
import type { Catalog, Grant } from '@ormuz/catalog';
import { decideGate, isScreenAction, type GateDecision, type NeedsObservation } from '@ormuz/gate';
import type { RiskClassifierOptions, TenantAppLists } from '@ormuz/risk';
import type { DecisionKind, PastRequest } from './past-requests.js';

/** The rules one run judges with. */
export interface Rules {
  readonly catalog: Catalog;
  /** The agent's grant (a candidate, else the tenant's current one). */
  readonly grantOf: (agentId: string) => Grant;
  readonly riskLexicon?: RiskClassifierOptions;
  readonly apps?: TenantAppLists;
}

/** One call whose decision would change. */
export interface ChangedDecision {
  readonly call_id: string;
  readonly seq: number;
  readonly time: string;
  readonly agent_id: string;
  readonly tool: string;
  readonly from: DecisionKind;
  readonly to: DecisionKind;
  /** Recorded and candidate reason (refusal code, or `risk_high` / `risk_low`). */
  readonly from_reason: string;
  readonly reason: string;
  /** The candidate decision's message or first reasons, for people. */
  readonly detail: string;
}

/** Changes counted by tool, transition and candidate reason. */
export interface ChangeCount {
  readonly tool: string;
  readonly from: DecisionKind;
  readonly to: DecisionKind;
  readonly reason: string;
  readonly calls: number;
}

export interface WhatIfReport {
  readonly judged: number;
  readonly changed: readonly ChangedDecision[];
  readonly counts: readonly ChangeCount[];
}

/** An approval lifetime for staged decisions: what-if only compares kinds, so any positive figure does. */
const ANY_TTL_MS = 60_000;

/** Judges every request again with `rules`; `now` is the clock the gate is given (it only sets approval expiries). */
export function rejudge(requests: readonly PastRequest[], rules: Rules, now: Date): WhatIfReport {
  const changed: ChangedDecision[] = [];
  for (const past of requests) {
    const decision = judge(past, rules, now);
    const { kind, reason, detail } = summarize(decision);
    if (kind === past.recorded && reason === past.reason) continue;
    changed.push({
      call_id: past.call_id,
      seq: past.seq,
      time: past.time,
      agent_id: past.request.agent_id,
      tool: past.request.tool,
      from: past.recorded,
      to: kind,
      from_reason: past.reason,
      reason,
      detail,
    });
  }
  return { judged: requests.length, changed, counts: countChanges(changed) };
}

function judge(past: PastRequest, rules: Rules, now: Date): GateDecision | NeedsObservation {
  const { request, judged_on } = past;
  let args: unknown = JSON.parse(request.payload);
  // The observation the call was judged on is not on its record; the text its verdict names stands for it.
  if (judged_on?.source === 'observation' && isScreenAction(request.tool) && judged_on.target_text !== null) {
    args = { ...(args as Record<string, unknown>), target_text: judged_on.target_text };
  }
  return decideGate(
    {
      catalog: rules.catalog,
      grant: rules.grantOf(request.agent_id),
      approvalTtlMs: ANY_TTL_MS,
      ...(rules.apps ? { apps: rules.apps } : {}),
      ...(rules.riskLexicon ? { riskLexicon: rules.riskLexicon } : {}),
    },
    { tool: request.tool, arguments: args, deviceId: request.target?.device_id ?? null, observation: null },
    now,
  );
}

function summarize(decision: GateDecision | NeedsObservation): { kind: DecisionKind; reason: string; detail: string } {
  switch (decision.kind) {
    case 'reject':
      return { kind: 'rejected', reason: decision.reasonCode, detail: decision.message };
    case 'refuse':
      return { kind: 'refused', reason: decision.reasonCode, detail: decision.message };
    case 'stage':
      return { kind: 'staged', reason: 'risk_high', detail: decision.verdict.reasons.slice(0, 2).join('; ') };
    case 'authorize':
      return { kind: 'authorized', reason: 'risk_low', detail: decision.verdict.reasons.slice(0, 2).join('; ') };
    case 'needs_observation':
      // Not reached: every request is judged with `observation: null`.
      return { kind: 'refused', reason: 'needs_observation', detail: 'the gate asked for an observation' };
  }
}

function countChanges(changed: readonly ChangedDecision[]): ChangeCount[] {
  const counts = new Map<string, ChangeCount>();
  for (const c of changed) {
    const key = JSON.stringify([c.tool, c.from, c.to, c.reason]);
    const seen = counts.get(key);
    counts.set(key, { tool: c.tool, from: c.from, to: c.to, reason: c.reason, calls: (seen?.calls ?? 0) + 1 });
  }
  return [...counts.values()].sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool));
}
