/**
 * The past tool requests of one tenant, read from its archived `calls` events: each request with the bytes it was
 * recorded with and the decision the gate recorded for it then. Pure: the events are passed in.
 */
import {
  ToolCallEventType as T,
  type ArchivedEventV1,
  type CallRequestedV1,
  type JudgedTargetV1,
} from '@ormuz/contracts';
import type { LogPoint } from '../as-of.js';

/** What the gate decided for a request: it became a refused, staged or authorized call, or no call at all. */
export type DecisionKind = 'refused' | 'staged' | 'authorized' | 'rejected';

/** One past request and the decision recorded for it. */
export interface PastRequest {
  readonly call_id: string;
  /** Stream sequence and time (RFC 3339) of the request. */
  readonly seq: number;
  readonly time: string;
  readonly request: CallRequestedV1;
  readonly recorded: DecisionKind;
  /** The refusal's reason code, or `risk_high` / `risk_low` for a staged or authorized call. */
  readonly reason: string;
  /** What a screen action's verdict was judged on, when the verdict says. */
  readonly judged_on?: JudgedTargetV1;
}

/** A bound of the range: a stream sequence or a time. */
export type RangeBound = LogPoint;

export interface Range {
  readonly from?: RangeBound;
  readonly to?: RangeBound;
}

/** Whether an event at `seq`, recorded at `time`, lies in `range` (both ends inclusive). */
export function inRange(range: Range, seq: number, time: string): boolean {
  const after = (b: RangeBound) => ('seq' in b ? seq >= b.seq : Date.parse(time) >= b.time.getTime());
  const before = (b: RangeBound) => ('seq' in b ? seq <= b.seq : Date.parse(time) <= b.time.getTime());
  return (!range.from || after(range.from)) && (!range.to || before(range.to));
}

/**
 * Collects requests in `range` with their first decision, in stream order, across pages: feed every page with
 * {@link add}, then read {@link requests}. A request whose decision is not archived yet is left out.
 */
export class PastRequests {
  private readonly open = new Map<string, { seq: number; time: string; request: CallRequestedV1 }>();
  private readonly decided: PastRequest[] = [];

  constructor(
    private readonly tenant: string,
    private readonly range: Range,
  ) {}

  add(events: readonly ArchivedEventV1[]): void {
    for (const { seq, event } of events) {
      // The archive answers for one tenant; an event of another would be a bug, and is never read.
      if (event.tenant !== this.tenant) continue;
      const data = event.data as { call_id?: string };
      if (event.type === T.Requested) {
        if (inRange(this.range, seq, event.time)) {
          this.open.set(data.call_id!, { seq, time: event.time, request: event.data as CallRequestedV1 });
        }
        continue;
      }
      const pending = data.call_id === undefined ? undefined : this.open.get(data.call_id);
      if (!pending) continue;
      const decision = recordedDecision(event.type, event.data);
      if (!decision) continue;
      this.open.delete(data.call_id!);
      this.decided.push({ call_id: data.call_id!, ...pending, ...decision });
    }
  }

  /** The decided requests seen so far, in stream order. */
  requests(): readonly PastRequest[] {
    return [...this.decided].sort((a, b) => a.seq - b.seq);
  }
}

function recordedDecision(
  type: string,
  data: unknown,
): Pick<PastRequest, 'recorded' | 'reason' | 'judged_on'> | undefined {
  const d = data as { reason_code?: string; verdict?: { level: string; judged_on?: JudgedTargetV1 } };
  switch (type) {
    case T.Refused:
      return { recorded: 'refused', reason: d.reason_code ?? 'refused' };
    case T.Staged:
    case T.Authorized:
      return {
        recorded: type === T.Staged ? 'staged' : 'authorized',
        reason: `risk_${d.verdict?.level ?? 'unknown'}`,
        ...(d.verdict?.judged_on ? { judged_on: d.verdict.judged_on } : {}),
      };
    default:
      return undefined;
  }
}
