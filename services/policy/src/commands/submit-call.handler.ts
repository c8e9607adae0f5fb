import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { Catalog, Grant } from '@ormuz/catalog';
import type { TenantAppLists } from '@ormuz/risk';
import type { SubmitCallReplyV1, SubmitCallRequestV1 } from '@ormuz/contracts';
import { decisionCommand, type SubmitDecision, type ToolCallState } from '@ormuz/tool-call';
import { ToolCalls } from '@ormuz/service-kit';
import {
  GEN_AI_AGENT_ID,
  inSpan,
  ORMUZ_APPROVAL_ID,
  ORMUZ_CALL_STATUS,
  ORMUZ_DECISION,
  ORMUZ_RISK_LEVEL,
  toolCallAttributes,
  type Span,
} from '@ormuz/tracing';
import { decideGate, isScreenAction, type GateDecision, type GateRequest, type RecordedDecision } from '@ormuz/gate';
import { POLICY_CONFIG, type PolicyConfig } from '../config.js';
import { PolicyMetrics } from '../metrics.js';
import { CATALOG } from '../domain/catalog.provider.js';
import { UnknownToolNameError } from '../domain/errors.js';
import { callIdOf } from '../domain/identity.js';
import { DeviceScreensRepository, ObservationLaggingError } from '../persistence/device-screens.repository.js';
import { GrantsRepository } from '../persistence/grants.repository.js';
import { RiskAppsRepository } from '../persistence/risk-apps.repository.js';
import { TenantSettingsRepository, type TenantSettings } from '../persistence/tenant-settings.repository.js';

export class SubmitCallCommand extends Command<SubmitCallReplyV1> {
  constructor(readonly request: SubmitCallRequestV1) {
    super();
  }
}

/**
 * The one place every transport's tool request passes through. Decides (pure), then records the request with its
 * canonical bytes and hash under the id its origin gives it (the id `policy.identify` answers) together with the
 * decision: one command, one append, one message on the log (docs/decisions/0015), so no call is left recorded but
 * undecided. The call's target comes from the gate, which takes it from the tool's executor. A duplicate observes the
 * original and nothing else happens.
 */
@CommandHandler(SubmitCallCommand)
export class SubmitCallHandler implements ICommandHandler<SubmitCallCommand> {
  constructor(
    private readonly calls: ToolCalls,
    private readonly grants: GrantsRepository,
    private readonly screens: DeviceScreensRepository,
    private readonly riskApps: RiskAppsRepository,
    private readonly settings: TenantSettingsRepository,
    @Inject(CATALOG) private readonly catalog: Catalog,
    @Inject(POLICY_CONFIG) private readonly config: PolicyConfig,
    private readonly metrics: PolicyMetrics,
  ) {}

  async execute({ request }: SubmitCallCommand): Promise<SubmitCallReplyV1> {
    const started = performance.now();
    const [grant, apps, settings] = await Promise.all([
      this.grants.effective(request.tenant, request.agent_id),
      this.riskApps.forTenant(request.tenant),
      // Only a tainted request needs the tenant's taint rule.
      request.taint ? this.settings.forTenant(request.tenant) : undefined,
    ]);
    const gate = await this.decide(request, grant, apps, settings);
    const seconds = () => (performance.now() - started) / 1000;
    if (gate.kind === 'reject') {
      this.metrics.decided('reject', 'none', seconds(), true);
      throw new UnknownToolNameError(gate.message);
    }
    const callId = callIdOf(request.tenant, request.origin);
    const attributes = {
      ...toolCallAttributes({ tenant: request.tenant, tool: gate.tool, callId }),
      [GEN_AI_AGENT_ID]: request.agent_id,
      [ORMUZ_DECISION]: gate.kind,
      ...(gate.kind === 'refuse' ? {} : { [ORMUZ_RISK_LEVEL]: gate.verdict.level }),
    };
    // The gate's decision, recorded in its own span: the message it appends carries it to every later hop.
    return inSpan('@ormuz/policy', `gate ${gate.tool}`, { attributes }, (span) =>
      this.record(request, callId, gate, span, seconds),
    );
  }

  private async record(
    request: SubmitCallRequestV1,
    callId: string,
    gate: RecordedDecision & GateDecision,
    span: Span,
    seconds: () => number,
  ): Promise<SubmitCallReplyV1> {
    const cause = { correlationid: request.correlation_id ?? callId, causationid: randomUUID() };
    const decision = submitDecision(callId, gate);
    const submitted = await this.calls.execute(
      request.tenant,
      callId,
      {
        type: 'SubmitCall',
        data: {
          call_id: callId,
          tool: gate.tool,
          contract_version: gate.contractVersion,
          payload: gate.payload.payload,
          payload_sha256: gate.payload.sha256,
          origin: request.origin,
          agent_id: request.agent_id,
          // Decided by the gate from the tool's executor: a platform tool never runs on the session's device.
          target: gate.target,
          decision,
        },
      },
      cause,
    );
    const duplicate = submitted.events.length === 0;
    this.metrics.decided(gate.kind, gate.kind === 'refuse' ? 'none' : gate.verdict.level, seconds(), !duplicate);
    span.setAttribute(ORMUZ_CALL_STATUS, submitted.state.status);
    if (decision.kind === 'stage') span.setAttribute(ORMUZ_APPROVAL_ID, decision.approval_id);
    if (!duplicate || submitted.state.status !== 'requested') {
      return reply(callId, gate.payload.sha256, submitted.state, duplicate);
    }
    // Still `requested`: recorded by an older version, which appended the request and the decision separately and
    // stopped in between. Such calls stay on existing logs, so they are decided here when their request comes again.
    const decided = await this.calls.execute(request.tenant, callId, decisionCommand(callId, decision), cause);
    return reply(callId, gate.payload.sha256, decided.state, true);
  }

  /** The gate's decision; a screen action that must be judged on the device's latest observation gets it loaded. */
  private async decide(
    request: SubmitCallRequestV1,
    grant: Grant,
    apps: TenantAppLists | undefined,
    settings: TenantSettings | undefined,
  ): Promise<GateDecision> {
    const ctx = {
      catalog: this.catalog,
      grant,
      approvalTtlMs: this.config.approvalTtlMs,
      ...(apps ? { apps } : {}),
      ...(settings ? { taintRule: settings.taint_rule } : {}),
    };
    const gateRequest: GateRequest = {
      tool: request.tool,
      arguments: request.arguments,
      deviceId: request.device_id,
      ...(request.taint ? { taint: request.taint } : {}),
      ...(request.denials ? { denials: request.denials } : {}),
    };
    const first = decideGate(ctx, gateRequest, new Date());
    // A screen action judged without the observation is judged again with it: what the screen shows (account
    // numbers, a switch under the finger) can raise or lower its risk. Without one on record, the first decision holds.
    const rejudge =
      (first.kind === 'stage' || first.kind === 'authorize') && isScreenAction(first.tool) && request.device_id;
    if (first.kind !== 'needs_observation' && !rejudge) return first;
    let observation;
    try {
      observation = request.device_id ? await this.screens.latest(request.tenant, request.device_id) : null;
    } catch (err) {
      if (!(err instanceof ObservationLaggingError)) throw err;
      observation = 'lagging' as const;
    }
    const decided = decideGate(
      ctx,
      { ...gateRequest, observation: observation === 'lagging' ? null : observation },
      new Date(),
    );
    if (decided.kind === 'needs_observation') throw new Error('the gate asked for an observation it was given');
    if (first.kind !== 'needs_observation' && observation === 'lagging') return first;
    if (observation !== 'lagging' || decided.kind !== 'refuse') return decided;
    return {
      ...decided,
      reasonCode: 'observation_unavailable',
      message:
        "Policy could not read the device's latest observation in time, so it could not tell what this action acts " +
        'on; nothing was done. Call device.screen_observe, then call again naming the element (ref and target_text).',
    };
  }
}

/** The gate's decision as the submit carries it, to be recorded with the request. */
function submitDecision(callId: string, gate: RecordedDecision): SubmitDecision {
  switch (gate.kind) {
    case 'refuse':
      return { kind: 'refuse', reason_code: gate.reasonCode, message: gate.message };
    case 'stage':
      return {
        kind: 'stage',
        approval_id: `apr_${callId.slice(5)}`,
        summary: gate.summary,
        expires_at: gate.expiresAt.toISOString(),
        verdict: gate.verdict,
      };
    case 'authorize':
      return { kind: 'authorize', verdict: gate.verdict };
  }
}

function reply(callId: string, sha256: string, state: ToolCallState, duplicate: boolean): SubmitCallReplyV1 {
  const approval = 'approval' in state ? state.approval : undefined;
  return {
    call_id: callId,
    status: state.status,
    duplicate,
    payload_sha256: sha256,
    message:
      state.status === 'refused'
        ? state.refusal.message
        : state.status === 'staged'
          ? 'pending_confirmation: the owner has been asked to approve this action. Do not retry it; tell the user it awaits approval.'
          : null,
    approval_id: approval?.approval_id ?? null,
    summary: approval?.summary ?? null,
    expires_at: approval?.expires_at ?? null,
  };
}
