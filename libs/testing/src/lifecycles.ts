/**
 * Drives tool calls through every lifecycle the decider allows, on a real log and with the real decider, as policy,
 * approvals and the executors record them: for tests of the read models that fold those lifecycles (policy's batch
 * writes, the crash test of every read model). Each test says what call `i` is (its tool, target, path, outcome);
 * the order of the commands, and what a path means, live here once.
 */
import { createHash, randomUUID } from 'node:crypto';
import { aggregateSubject, canonicalPayload, envelope, ToolCallEventType, type JsonValue } from '@ormuz/contracts';
import { runCommand, streamName, type EventStore } from '@ormuz/event-log';
import {
  decisionCommand,
  toolCallDecider,
  type CallOutcome,
  type SubmitDecision,
  type ToolCallCommand,
} from '@ormuz/tool-call';
import { lifecycleCommands } from './calls.js';

/**
 * How far a call goes. `refused` is refused at its submit; `denied` and `approved` are staged first, and an approved
 * call runs on like `finished`; `sealed` is authorized, then sealed; `lost` starts and loses its connection;
 * `finished` starts and records its outcome; `finishedAtOnce` records its start and outcome in one message, as a
 * bridge that learns both at once does.
 */
export type LifecyclePath = 'refused' | 'denied' | 'approved' | 'sealed' | 'lost' | 'finished' | 'finishedAtOnce';

/** What call `i` is. */
export interface LifecyclePlan {
  readonly tool: string;
  readonly args: JsonValue;
  /** The target device, or none (the call runs on model-loop). */
  readonly device: { readonly device_id: string } | null;
  readonly agentId: string;
  readonly path: LifecyclePath;
  /** The request and its decision in one message, as policy decides; else the decision alone, as older versions did. */
  readonly together: boolean;
  /** What a call that runs to the end records. */
  readonly outcome: CallOutcome;
}

/** The log the calls go on: the `calls` stream of namespace `ns`. */
export interface LifecycleLog {
  readonly store: EventStore;
  readonly ns: string;
  readonly tenant: string;
  /** The CloudEvents source of what is appended. */
  readonly source: string;
}

/** `lifecycle(i)` puts call `i`, as `plan(i)` describes it, through its whole lifecycle on the log. */
export function callLifecycles(log: LifecycleLog, plan: (i: number) => LifecyclePlan): (i: number) => Promise<void> {
  const stream = streamName(log.ns, 'calls');
  return async (i) => {
    const call = plan(i);
    const callId = `call_${createHash('sha256').update(`${log.ns}/${i}`).digest('hex').slice(0, 32)}`;
    const { payload, sha256 } = canonicalPayload(call.args);
    const step = lifecycleCommands(callId, sha256);
    const subject = aggregateSubject(log.ns, 'calls', log.tenant, callId);
    const cause = {
      source: log.source,
      tenant: log.tenant,
      aggregateId: callId,
      correlationid: callId,
      causationid: randomUUID(),
    };
    const run = (command: ToolCallCommand) => runCommand(log.store, stream, subject, toolCallDecider, command, cause);
    const inAMinute = new Date(Date.now() + 60_000).toISOString();
    const approvalId = `apr_${callId.slice(5, 21)}`;
    const staged = call.path === 'denied' || call.path === 'approved';
    const decision: SubmitDecision =
      call.path === 'refused'
        ? { kind: 'refuse', reason_code: 'tool_not_granted', message: 'Not granted.' }
        : staged
          ? {
              kind: 'stage',
              approval_id: approvalId,
              summary: `Run ${call.tool} ${i}.`,
              expires_at: inAMinute,
              verdict: { level: 'high', reasons: [`${call.tool} is high risk`] },
            }
          : { kind: 'authorize', verdict: { level: 'low', reasons: [] } };
    await run({
      type: 'SubmitCall',
      data: {
        call_id: callId,
        tool: call.tool,
        contract_version: 'v1-test',
        payload,
        payload_sha256: sha256,
        origin: { kind: 'operation', operation_id: `op-${i}` },
        agent_id: call.agentId,
        target: call.device,
        ...(call.together ? { decision } : {}),
      },
    });
    if (!call.together) await run(decisionCommand(callId, decision));
    if (call.path === 'refused') return;
    if (call.path === 'denied') {
      await run(step.deny(approvalId));
      return;
    }
    if (call.path === 'approved') await run(step.approve(approvalId));
    if (call.path === 'sealed') {
      await run(step.seal());
      return;
    }
    const requestId = `req-${i}`;
    const dispatched = await run(step.dispatch(requestId, call.device, inAMinute));
    if (call.path === 'finishedAtOnce') {
      const at = {
        source: log.source,
        tenant: log.tenant,
        subject: callId,
        correlationid: callId,
        causationid: 'x',
        time: new Date(),
      };
      const executorId = call.device?.device_id ?? 'model-loop';
      const ids = { call_id: callId, request_id: requestId };
      const outcome = call.outcome;
      await log.store.append(
        subject,
        [
          envelope(
            { type: ToolCallEventType.Started, data: { ...ids, executor_id: executorId, boot_id: 'boot-1' } },
            at,
          ),
          outcome.kind === 'succeeded'
            ? envelope({ type: ToolCallEventType.Succeeded, data: { ...ids, result: outcome.result } }, at)
            : envelope({ type: ToolCallEventType.Failed, data: { ...ids, error: outcome.error } }, at),
        ],
        dispatched.version,
      );
      return;
    }
    await run(step.claimStart(requestId, call.device));
    if (call.path === 'lost') {
      await run(step.connectionLost(requestId));
      return;
    }
    await run({ type: 'RecordOutcome', data: { call_id: callId, request_id: requestId, outcome: call.outcome } });
  };
}
