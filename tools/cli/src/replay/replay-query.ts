/**
 * What `ormuz replay` asks for, read from its options: the bounds (a stream sequence, an RFC 3339 time, or a duration
 * meaning "that long ago"), the aggregate filters and the type globs, resolved against the event types the contracts
 * declare. Pure: every bad input is an error naming what to do instead, before anything is sent.
 */
import {
  CONTEXTS,
  ConversationEventType,
  DeviceEventType,
  TenantDayEventType,
  ToolCallEventType,
  type AuditReplayRequestV1,
  type ContextName,
} from '@ormuz/contracts';

/** Every event type on the log, by the context whose stream holds it. */
export const KNOWN_EVENT_TYPES: Readonly<Record<ContextName, readonly string[]>> = Object.freeze({
  calls: Object.values(ToolCallEventType),
  conversations: Object.values(ConversationEventType),
  devices: Object.values(DeviceEventType),
  usage: Object.values(TenantDayEventType),
});

export const CONTEXT_NAMES = Object.keys(CONTEXTS) as ContextName[];

/** A bound of the range: a message sequence of one stream, or an instant. */
export type Bound = { readonly seq: number } | { readonly time: Date };

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w))+$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** Reads `--from`/`--to`: `1234` (a sequence), `2026-01-31T09:00:00Z` (a time), or `2h`, `1d12h`, `90s` (that long ago). */
export function parseBound(option: string, value: string, now: Date): Bound {
  if (/^\d+$/.test(value)) {
    const seq = Number(value);
    if (!Number.isSafeInteger(seq) || seq < 1)
      throw new Error(`${option} ${value}: a sequence is a whole number from 1.`);
    return { seq };
  }
  if (DURATION.test(value)) {
    let ms = 0;
    for (const [, n, unit] of value.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) ms += Number(n) * UNIT_MS[unit!]!;
    return { time: new Date(now.getTime() - ms) };
  }
  const time = RFC3339.test(value) ? new Date(value) : undefined;
  if (!time || Number.isNaN(time.getTime())) {
    throw new Error(
      `${option} ${value} is neither a sequence (1234), an RFC 3339 time (2026-01-31T09:00:00Z) nor a duration ago (2h, 1d12h, 90s).`,
    );
  }
  if (time > now) {
    throw new Error(
      `${option} ${value} is in the future (now is ${now.toISOString()}): nothing is recorded there yet.` +
        (option === '--to' ? ' Leave --to out to replay up to now.' : ''),
    );
  }
  return { time };
}

/** `*` any run of characters, `?` one; everything else literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** The known types each glob matches; a glob matching none is an error listing the known types. */
export function resolveTypes(globs: readonly string[]): Map<ContextName, string[]> {
  const out = new Map<ContextName, string[]>();
  for (const glob of globs) {
    const re = globToRegExp(glob);
    let matched = false;
    for (const context of CONTEXT_NAMES) {
      for (const type of KNOWN_EVENT_TYPES[context].filter((t) => re.test(t))) {
        matched = true;
        const types = out.get(context) ?? [];
        if (!types.includes(type)) types.push(type);
        out.set(context, types);
      }
    }
    if (!matched) {
      const known = CONTEXT_NAMES.flatMap((c) => KNOWN_EVENT_TYPES[c]).join(', ');
      throw new Error(
        `--type ${glob} matches no event type. Known types: ${known}. Globs take * and ?, e.g. 'ormuz.toolcall.*'.`,
      );
    }
  }
  return out;
}

export interface ReplayOptions {
  readonly tenant: string;
  readonly from?: string;
  readonly to?: string;
  readonly context?: string;
  readonly call?: string;
  readonly agent?: string;
  readonly device?: string;
  readonly type?: readonly string[];
}

/** One context's requests, without the cursor: what each page asks for. */
export type ContextQuery = Omit<AuditReplayRequestV1, 'after' | 'limit'>;

/** The resolved replay: one query per context to read, in this order, and where each starts. */
export interface ReplayPlan {
  readonly queries: readonly ContextQuery[];
  /** The first sequence to read (from a sequence `--from`), else 1. */
  readonly fromSeq: number;
}

export function planReplay(o: ReplayOptions, now: Date = new Date()): ReplayPlan {
  const from = o.from === undefined ? undefined : parseBound('--from', o.from, now);
  const to = o.to === undefined ? undefined : parseBound('--to', o.to, now);
  if (from && to) {
    const after =
      'seq' in from && 'seq' in to ? from.seq > to.seq : 'time' in from && 'time' in to ? from.time > to.time : false;
    if (after) throw new Error(`--from ${o.from} is after --to ${o.to}: swap them.`);
  }
  if (o.context !== undefined && !(CONTEXT_NAMES as string[]).includes(o.context)) {
    throw new Error(`Unknown context ${o.context}; use one of ${CONTEXT_NAMES.join(', ')}.`);
  }
  const types = o.type?.length ? resolveTypes(o.type) : undefined;
  let contexts = o.context ? [o.context as ContextName] : CONTEXT_NAMES;
  if (o.call !== undefined) {
    if (o.context && o.context !== 'calls')
      throw new Error(`--call reads the calls stream; drop --context ${o.context}.`);
    contexts = ['calls'];
  }
  if (types) contexts = contexts.filter((c) => types.has(c));
  if (contexts.length === 0) {
    throw new Error(`--type ${o.type!.join(' ')} matches no event of ${o.call ? 'a call' : `context ${o.context}`}.`);
  }
  if (o.agent !== undefined) contexts = contexts.filter((c) => c !== 'devices');
  if (contexts.length === 0)
    throw new Error('--agent selects calls and conversations; the devices stream names no agent.');
  const seqBound = (from && 'seq' in from) || (to && 'seq' in to);
  if (seqBound && contexts.length > 1) {
    throw new Error(
      `A sequence bound is a place in one stream, and this replay reads ${contexts.join(', ')}: name one with --context.`,
    );
  }
  const queries = contexts.map((context): ContextQuery => ({
    tenant: o.tenant,
    context,
    ...(to && 'seq' in to ? { to_seq: to.seq } : {}),
    ...(from && 'time' in from ? { from_time: from.time.toISOString() } : {}),
    ...(to && 'time' in to ? { to_time: to.time.toISOString() } : {}),
    ...(o.call !== undefined ? { subject: o.call } : {}),
    ...(o.agent !== undefined ? { agent_id: o.agent } : {}),
    ...(o.device !== undefined ? { device_id: o.device } : {}),
    ...(types ? { types: types.get(context)! } : {}),
  }));
  return { queries, fromSeq: from && 'seq' in from ? from.seq : 1 };
}
