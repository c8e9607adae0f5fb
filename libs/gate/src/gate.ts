/**
 * Step 3 of the agent loop: what policy decides for one tool request. Pure: the catalog, the grant, the designer
 * configuration and the clock are passed in.
 *
 * Order: the catalog reads the called name (see readToolName) and the grant resolves the tool (unknown names get
 * the closest real ones, and text that is not a tool name cannot become a call at all; tools not offered are refused
 * as not permitted here), arguments are normalised, designer values filled and validated, then the risk
 * level is decided: the tool's own level, or the deterministic classifier for tools marked `classify`. High risk is
 * staged for the owner; low risk is authorized with the verdict stamped in; an action whose foreground app cannot be
 * told is refused with the fix. A screen action is judged on what it will really act on (screen-target.ts): a tap by
 * coordinates or by ref without text is resolved against the device's latest observation, and the verdict says
 * which app and text it was judged on, for the device to check.
 *
 * Conversations add two rules. A request identical to one the owner denied earlier in the conversation is refused
 * with the owner's reason, without asking again (denials.ts). While the conversation holds untrusted content (read
 * since the user's last message), a write whose text or target appeared in it, or under the tenant's `every_write`
 * rule any write, is staged whatever its risk level, the taint reason first among the verdict's reasons so the owner
 * sees it (taint.ts, which defines the matching precisely).
 */
import {
  canonicalPayload,
  type CanonicalPayload,
  type ConversationTaintV1,
  type JudgedTargetV1,
  type OwnerDenialV1,
  type TaintRuleV1,
} from '@ormuz/contracts';
import {
  prepareCall,
  recordableToolName,
  renderOwnerSummary,
  type Catalog,
  type DesignerConfig,
  type Grant,
  type ToolExecutor,
} from '@ormuz/catalog';
import { classifyRisk, MAX_REASONS, type RiskClassifierOptions, type TenantAppLists } from '@ormuz/risk';
import { repeatedDenial, repeatedDenialMessage } from './denials.js';
import { observedScreen, resolveScreenTarget, type ScreenObservation } from './screen-target.js';
import { taintFinding } from './taint.js';

export interface GateRequest {
  readonly tool: string;
  readonly arguments: unknown;
  /** The device the session acts on (trusted context), or null. */
  readonly deviceId: string | null;
  /**
   * That device's latest observation on the log (`null`: none on record), or left out when not loaded yet: a call
   * that needs it is then answered `needs_observation`, and the caller decides again with it.
   */
  readonly observation?: ScreenObservation | null;
  /** Untrusted content the conversation read since the user's last message; absent when none. */
  readonly taint?: ConversationTaintV1;
  /** Requests the owner denied earlier in the conversation. */
  readonly denials?: readonly OwnerDenialV1[];
}

interface Recorded {
  /** The bytes recorded and, when the call runs, sent: normalised arguments when valid, else the model's own. */
  readonly payload: CanonicalPayload;
  /** Canonical tool name when the catalog knows it, else the name as sent. */
  readonly tool: string;
  readonly contractVersion: string;
  /**
   * Where the call runs, from the catalog entry's executor: the session's device for a device tool, `null` for a
   * platform tool (the platform runs it) and for a name the catalog does not know (it runs nowhere). Everything
   * downstream routes by this record.
   */
  readonly target: { readonly device_id: string } | null;
}

/** A decision that becomes a call: recorded with its bytes, then refused, staged or authorized. */
export type RecordedDecision = Recorded &
  (
    | { readonly kind: 'refuse'; readonly reasonCode: string; readonly message: string }
    | {
        readonly kind: 'stage';
        readonly summary: string;
        readonly expiresAt: Date;
        readonly verdict: { level: 'high'; reasons: string[]; judged_on?: JudgedTargetV1 };
      }
    | { readonly kind: 'authorize'; readonly verdict: { level: 'low'; reasons: string[]; judged_on?: JudgedTargetV1 } }
  );

/**
 * A request that cannot become a call at all: its tool name is neither a catalog name nor shaped like one
 * (`send_message`, `a.b.c`), so there is no name to record it under. Nothing is recorded; `message` says which names
 * come closest.
 */
export interface RejectedRequest {
  readonly kind: 'reject';
  readonly reasonCode: 'unknown_tool';
  readonly message: string;
}

export type GateDecision = RecordedDecision | RejectedRequest;

/** The request needs the device's latest observation: load it and decide again with `observation` set. */
export interface NeedsObservation {
  readonly kind: 'needs_observation';
}

export interface GateContext {
  readonly catalog: Catalog;
  readonly grant: Grant;
  readonly designer?: DesignerConfig;
  readonly approvalTtlMs: number;
  /** The tenant's finance / not-finance app lists, when it set any (`policy.risk.apps.set`). */
  readonly apps?: TenantAppLists;
  /** The tenant's taint rule (`policy.settings.set`); `matching` when it set none. */
  readonly taintRule?: TaintRuleV1;
  /**
   * Words and packages the risk classifier adds to its built-in lexicon; absent: the built-in one (as policy runs).
   * `ormuz whatif` passes a candidate lexicon here. Pass the same object for every call (the classifier is cached).
   */
  readonly riskLexicon?: RiskClassifierOptions;
}

/**
 * Decides one request, or asks for the device's latest observation when the request needs it and did not carry it.
 * Throws only NonCanonicalValueError, for arguments that have no canonical bytes at all.
 */
export function decideGate(ctx: GateContext, request: GateRequest, now: Date): GateDecision | NeedsObservation {
  const prepared = prepareCall(
    ctx.catalog,
    ctx.grant,
    { tool: request.tool, arguments: request.arguments },
    ctx.designer,
  );
  if (!prepared.ok) {
    // A known tool is recorded under its canonical name; an unknown one as it was sent, when that is a tool name.
    const tool = prepared.tool ?? recordableToolName(request.tool);
    if (tool === undefined) return { kind: 'reject', reasonCode: 'unknown_tool', message: prepared.message };
    return {
      kind: 'refuse',
      reasonCode: prepared.reason_code,
      message: prepared.message,
      payload: canonicalPayload(request.arguments ?? {}),
      tool,
      contractVersion: 'unknown',
      target: targetOf(ctx.catalog.resolve(tool)?.executor, request.deviceId),
    };
  }
  const { definition, args, entry } = prepared;
  const recorded: Recorded = {
    payload: canonicalPayload(args),
    tool: definition.name,
    contractVersion: String(prepared.version),
    target: targetOf(entry.executor, request.deviceId),
  };
  const denied = repeatedDenial(
    ctx.catalog,
    ctx.grant,
    ctx.designer,
    request.denials,
    definition.name,
    recorded.payload.sha256,
  );
  if (denied) {
    return { ...recorded, kind: 'refuse', reasonCode: 'denied_by_owner', message: repeatedDenialMessage(denied) };
  }
  if (entry.executor === 'device' && !request.deviceId) {
    return {
      ...recorded,
      kind: 'refuse',
      reasonCode: 'no_device',
      message: `${definition.name} acts on a phone, and this conversation has no device attached. Tell the user to connect one.`,
    };
  }
  const target = resolveScreenTarget(definition.name, args, request.observation);
  if (target?.kind === 'needs_observation') return target;
  if (target?.kind === 'refuse')
    return { ...recorded, kind: 'refuse', reasonCode: target.reasonCode, message: target.message };
  const targetText = target ? target.targetText : typeof args.target_text === 'string' ? args.target_text : null;
  const judged = target?.judged ? { judged_on: target.judged } : {};
  const foreground = typeof args.foreground_package === 'string' ? args.foreground_package : null;
  // What the device's latest observation shows of that app: a finance screen, and whether the target is a switch.
  const seen = foreground === null ? {} : observedScreen(request.observation, foreground, args, targetText);
  const classified =
    definition.risk_level === 'classify'
      ? classifyRisk(
          {
            tool: definition.name,
            args,
            target_text: targetText,
            foreground_package: foreground,
            target_role: seen.targetRole ?? null,
            screen_text: seen.screenText ?? null,
          },
          ctx.riskLexicon,
          ctx.apps,
        )
      : { level: definition.risk_level, reasons: [`${definition.name} is declared ${definition.risk_level} risk`] };
  const tainted = taintFinding(
    { definition, executor: entry.executor, args },
    request.taint,
    ctx.taintRule ?? 'matching',
  );
  const verdict = {
    ...classified,
    reasons: [...(tainted ? [tainted.reason] : []), ...(target?.reasons ?? []), ...classified.reasons].slice(
      0,
      MAX_REASONS,
    ),
  };
  if (verdict.level === 'refused') {
    return {
      ...recorded,
      kind: 'refuse',
      reasonCode: 'risk_undetermined',
      message: `${verdict.reasons.join('; ')}. ${'fix' in verdict && verdict.fix ? verdict.fix : ''}`.trim(),
    };
  }
  if (verdict.level === 'high' || tainted) {
    return {
      ...recorded,
      kind: 'stage',
      summary: renderOwnerSummary(definition, { ...args, target_text: targetText ?? undefined }),
      expiresAt: new Date(now.getTime() + ctx.approvalTtlMs),
      verdict: { level: 'high', reasons: [...verdict.reasons], ...judged },
    };
  }
  return { ...recorded, kind: 'authorize', verdict: { level: 'low', reasons: [...verdict.reasons], ...judged } };
}

/** The session's device for a tool the device runs; no target for one the platform runs or the catalog does not know. */
function targetOf(executor: ToolExecutor | undefined, deviceId: string | null): Recorded['target'] {
  return executor === 'device' && deviceId ? { device_id: deviceId } : null;
}
