/**
 * The archive's hash chain (docs/archive-chain.md, docs/decisions/0026): each tenant's archived events form one chain
 * in the order they were archived. A link is the SHA-256 of the canonical bytes of a fixed set of fields, among them
 * the previous link; the event's data is covered through hashes, so an erasable field (a call's payload, result or
 * error) can be removed from a row while the chain still verifies.
 */
import { hash } from 'node:crypto';

/** The `prev_hash` of a tenant's first archived event. */
export const GENESIS_HASH = '0'.repeat(64);

/** Version of the canonical form, part of every link so that a future form cannot be confused with this one. */
export const CHAIN_FORM_VERSION = 1;

/** What a retention rule or an erasure removes: call payloads, or call results (and failures). */
export type ErasableKind = 'payloads' | 'results';

/** Event types with an erasable field, the field, and what kind of data it is. */
const ERASABLE: Readonly<Record<string, { readonly field: string; readonly kind: ErasableKind }>> = Object.freeze({
  'ormuz.toolcall.requested.v1': { field: 'payload', kind: 'payloads' },
  'ormuz.toolcall.succeeded.v1': { field: 'result', kind: 'results' },
  'ormuz.toolcall.failed.v1': { field: 'error', kind: 'results' },
});

/** The data fields each kind names (the erase function removes a row's own erasable field when it is one of them). */
export function erasableFields(kinds: readonly ErasableKind[]): string[] {
  return [...new Set(Object.values(ERASABLE).flatMap((e) => (kinds.includes(e.kind) ? [e.field] : [])))];
}

/** The erasable top-level field of an event of `type`, when its data has it. */
export function erasableFieldOf(type: string, data: unknown): string | null {
  const field = ERASABLE[type]?.field;
  return field !== undefined && isObject(data) && Object.hasOwn(data, field) ? field : null;
}

/**
 * RFC 8785 (JSON Canonicalization Scheme) text of a JSON value: object members sorted by the UTF-16 code units of
 * their names, no whitespace, strings as ECMAScript's JSON.stringify writes them, numbers in ECMAScript's shortest
 * round-trip form. Unlike the tool payload's canonical form, strings are not normalised: every code unit counts.
 */
export function jcs(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JSON has no representation for a non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs(value[k])}`).join(',')}}`;
  }
  throw new TypeError(`JSON has no representation for a ${typeof value}`);
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export const sha256 = (text: string): string => hash('sha256', text, 'hex');

/** An event to archive, as the archive stores it, before it is linked. */
export interface UnlinkedEvent {
  readonly tenant: string;
  readonly stream: string;
  readonly seq: number;
  readonly idx: number;
  readonly id: string;
  readonly type: string;
  readonly subject: string;
  readonly time: Date;
  readonly source: string;
  readonly correlation_id: string;
  readonly causation_id: string;
  readonly schema_version: number;
  readonly data: unknown;
}

/** The fields of one archived event that its link covers, as the archive stores them. */
export interface ChainedEvent extends Omit<UnlinkedEvent, 'data'> {
  readonly chain_pos: number;
  /** SHA-256 of the data without its erasable field. */
  readonly data_sha256: string;
  readonly erasable_field: string | null;
  /** SHA-256 of the erasable field's value; null when the event has none. */
  readonly erasable_sha256: string | null;
  readonly prev_hash: string;
}

/** The hashes of an event's data: of the data without its erasable field, and of that field's value. */
export function dataHashes(
  data: unknown,
  erasableField: string | null,
): { data_sha256: string; erasable_sha256: string | null } {
  if (erasableField === null || !isObject(data)) return { data_sha256: sha256(jcs(data)), erasable_sha256: null };
  const { [erasableField]: erasable, ...rest } = data;
  return { data_sha256: sha256(jcs(rest)), erasable_sha256: sha256(jcs(erasable)) };
}

/** The canonical text a link hashes: the JCS form of the fixed field set below, with the form's version. */
export function canonicalLink(e: ChainedEvent): string {
  return jcs({
    v: CHAIN_FORM_VERSION,
    tenant: e.tenant,
    pos: e.chain_pos,
    stream: e.stream,
    seq: e.seq,
    idx: e.idx,
    id: e.id,
    type: e.type,
    subject: e.subject,
    time: e.time.toISOString(),
    source: e.source,
    correlation_id: e.correlation_id,
    causation_id: e.causation_id,
    schema_version: e.schema_version,
    data_sha256: e.data_sha256,
    erasable_field: e.erasable_field,
    erasable_sha256: e.erasable_sha256,
    prev_hash: e.prev_hash,
  });
}

/** The link (`row_hash`) of an archived event. */
export const linkHash = (e: ChainedEvent): string => sha256(canonicalLink(e));

/** Where a tenant's chain ends: the last position and its link (position 0 and the genesis hash when empty). */
export interface ChainHead {
  readonly position: number;
  readonly hash: string;
}

export const EMPTY_CHAIN: ChainHead = Object.freeze({ position: 0, hash: GENESIS_HASH });

/** What an archived row holds beyond the chained fields: the data (maybe erased) and its own stored link. */
export interface StoredLink extends ChainedEvent {
  readonly data: unknown;
  readonly erased_at: Date | null;
  readonly row_hash: string;
}

/** The first thing wrong at one link, and what was expected there. */
export interface BrokenLink {
  readonly position: number;
  readonly event_id: string;
  readonly reason: 'position' | 'prev_hash' | 'data_hash' | 'erasable_hash' | 'row_hash';
  readonly expected: string;
  readonly found: string;
}

/**
 * Checks one stored row against the chain so far (`head`: the verified link before it). Returns the first problem,
 * or null when the row is a good next link; its verified link is then `row.row_hash`.
 */
export function checkLink(row: StoredLink, head: ChainHead): BrokenLink | null {
  const broken = (reason: BrokenLink['reason'], expected: string, found: string): BrokenLink => ({
    position: head.position + 1,
    event_id: row.id,
    reason,
    expected,
    found,
  });
  if (row.chain_pos !== head.position + 1) return broken('position', String(head.position + 1), String(row.chain_pos));
  if (row.prev_hash !== head.hash) return broken('prev_hash', head.hash, row.prev_hash);
  const present = row.erasable_field !== null && isObject(row.data) && Object.hasOwn(row.data, row.erasable_field);
  // An erased row has lost its erasable field (and says when); its data without it must still match.
  const field = row.erasable_field !== null && (present || row.erased_at === null) ? row.erasable_field : null;
  if (field !== null && !present) return broken('erasable_hash', row.erasable_sha256 ?? 'null', 'missing');
  const hashes = dataHashes(row.data, field);
  if (hashes.data_sha256 !== row.data_sha256) return broken('data_hash', row.data_sha256, hashes.data_sha256);
  if (field !== null && hashes.erasable_sha256 !== row.erasable_sha256) {
    return broken('erasable_hash', row.erasable_sha256 ?? 'null', hashes.erasable_sha256 ?? 'null');
  }
  const link = linkHash(row);
  if (link !== row.row_hash) return broken('row_hash', link, row.row_hash);
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An event linked into its tenant's chain: what is inserted. */
export interface LinkedEvent extends UnlinkedEvent, ChainedEvent {
  readonly row_hash: string;
}

/**
 * Links `events`, in the order given, onto their tenants' chains. `heads` holds each tenant's head before (a tenant
 * missing starts a chain) and is moved to the new heads.
 */
export function linkEvents(heads: Map<string, ChainHead>, events: readonly UnlinkedEvent[]): LinkedEvent[] {
  return events.map((e) => {
    const head = heads.get(e.tenant) ?? EMPTY_CHAIN;
    const erasable_field = erasableFieldOf(e.type, e.data);
    const chained = {
      ...e,
      ...dataHashes(e.data, erasable_field),
      erasable_field,
      chain_pos: head.position + 1,
      prev_hash: head.hash,
    };
    const linked = { ...chained, row_hash: linkHash(chained) };
    heads.set(e.tenant, { position: linked.chain_pos, hash: linked.row_hash });
    return linked;
  });
}
