/**
 * What `tools/call` answers: the call's outcome in the shape model-loop writes it into a conversation (one runtime
 * line, then the executor's data fenced as untrusted, libs/tool-call `toolResult`), as the text a model reads, and the
 * same facts as `structuredContent` for a client that reads JSON. Pure.
 */
import type { CallStatusReplyV1, JsonValue } from '@ormuz/contracts';
import { toolResult, type CallOutcomeReport } from '@ormuz/tool-call';

/** The core tool a client asks about a call with, rather than calling the tool again. */
export const CHECK_STATUS_TOOL = 'ormuz.check_call_status';

/** The MCP `CallToolResult` the gateway answers (text content, structured content, error flag). */
export interface McpCallResult {
  readonly content: readonly { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent: {
    readonly status: string;
    readonly call_id: string | null;
    readonly tool: string;
    readonly outcome: JsonValue | null;
    readonly approval_id?: string;
    readonly summary?: string;
    readonly message?: string;
    /** True when the data was cut short: the text holds the part shown and the continuation to read on with. */
    readonly partial?: boolean;
  };
  readonly isError: boolean;
  readonly [key: string]: unknown;
}

/**
 * A report of a call that has an outcome (or waits for one that is not the gateway's to wait for: the owner), its
 * data bounded to `maxDataBytes` UTF-8 bytes (see libs/tool-call `toolResult`).
 */
export function resultOf(
  callId: string,
  tool: string,
  source: string,
  report: CallOutcomeReport,
  maxDataBytes?: number,
): McpCallResult {
  const { content, provenance } = toolResult({ call_id: callId, tool, source, outcome: report }, maxDataBytes);
  const lines = [content];
  let structured: McpCallResult['structuredContent'] = { status: report.status, call_id: callId, tool, outcome: null };
  switch (report.status) {
    case 'pending_confirmation':
      lines.push(
        `Do not call ${tool} again for this: the owner's answer decides it. Check with ${CHECK_STATUS_TOOL} ` +
          `{"call_id": ${JSON.stringify(callId)}}.`,
      );
      structured = { ...structured, approval_id: report.approval_id, summary: report.summary };
      break;
    case 'succeeded':
      structured = provenance.truncated ? { ...structured, partial: true } : { ...structured, outcome: report.result };
      break;
    case 'failed':
      structured = { ...structured, outcome: { code: report.error.code, message: report.error.message } };
      break;
    case 'refused':
    case 'rejected':
      structured = { ...structured, message: report.message };
      break;
    default:
      break;
  }
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: structured,
    isError: !(report.status === 'succeeded' || report.status === 'pending_confirmation'),
  };
}

/** A call still running when the gateway stopped waiting: not an error, and not to be called again. */
export function stillRunning(callId: string, tool: string, status: string, waitedMs: number): McpCallResult {
  const message =
    `${tool} was accepted and is ${status}; it had no outcome after ${Math.round(waitedMs / 1000)} s. Do not call it ` +
    `again: check with ${CHECK_STATUS_TOOL} {"call_id": ${JSON.stringify(callId)}}.`;
  return {
    content: [{ type: 'text', text: JSON.stringify({ status, message }) }],
    structuredContent: { status, call_id: callId, tool, outcome: null, message },
    isError: false,
  };
}

/** Statuses after which nothing more happens to a call without the owner (staged) or ever. */
export const SETTLED = new Set([
  'refused',
  'staged',
  'denied',
  'expired',
  'succeeded',
  'failed',
  'outcome_unknown',
  'sealed',
]);

/**
 * The report for a call's status view once it is settled (see {@link SETTLED}), or `undefined` while it runs.
 * `refusal` is the gate's sentence for a refusal (the status view only says what to do next).
 */
export function reportOfStatus(
  view: CallStatusReplyV1['status'],
  refusal?: string | null,
): CallOutcomeReport | undefined {
  switch (view.status) {
    case 'refused':
      return { status: 'refused', message: refusal ?? view.next_step };
    case 'staged':
      return view.pending_approval
        ? {
            status: 'pending_confirmation',
            approval_id: view.pending_approval.approval_id,
            summary: view.pending_approval.summary,
          }
        : undefined;
    case 'succeeded':
      return view.outcome?.kind === 'succeeded' ? { status: 'succeeded', result: view.outcome.result } : undefined;
    case 'failed':
      return view.outcome?.kind === 'failed' ? { status: 'failed', error: view.outcome.error } : undefined;
    case 'outcome_unknown':
      return { status: 'outcome_unknown', cause: view.unknown_cause ?? 'timeout', detail: '' };
    case 'denied':
      return { status: 'denied', reason: null };
    case 'expired':
      return { status: 'expired' };
    case 'sealed':
      return { status: 'sealed', reason: view.sealed_by ? `sealed by ${view.sealed_by}` : 'sealed' };
    default:
      return undefined;
  }
}
