/**
 * The device journal: what this device received, claimed, started and finished, keyed by request id, on local disk.
 *
 * It is what makes "run at most once" hold on the device across reconnects and restarts: the start is written and
 * fsynced before the executor runs, and a request whose journal says it started is never run again, whatever the
 * server sends. It also answers status queries, so a status query never needs to act.
 */
import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { OrmuzError, type JsonValue, type RiskVerdictV1, type WireErrorV1 } from '@ormuz/contracts';

/**
 * Where a request stands in the journal.
 * `received` → `claimed` → `started` → `succeeded` | `failed`; `refused` (the server refused the claim),
 * `rejected` (the device refused before claiming) and `sealed` end a request that never started.
 */
export type JournalState =
  'received' | 'claimed' | 'started' | 'succeeded' | 'failed' | 'refused' | 'rejected' | 'sealed';

/** The outcome of a run as the journal keeps it and the device reports it. */
export type JournalOutcome =
  | { readonly status: 'succeeded'; readonly result: JsonValue; readonly durationMs?: number }
  | { readonly status: 'failed'; readonly error: WireErrorV1; readonly durationMs?: number };

/** What the journal knows about one request. Times are RFC 3339 on the device clock. */
export interface JournalEntry {
  readonly requestId: string;
  readonly state: JournalState;
  /** Absent only for a request sealed before it was ever received. */
  readonly callId?: string;
  readonly tool?: string;
  readonly payloadSha256?: string;
  readonly deadline?: string;
  readonly verdict?: RiskVerdictV1;
  readonly receivedAt?: string;
  readonly startedAt?: string;
  /** Boot of the device process that started the run. */
  readonly startedBootId?: string;
  readonly outcome?: JournalOutcome;
  /** True once the server acknowledged the outcome. */
  readonly acked: boolean;
  /** Why the request was refused, rejected or sealed. */
  readonly reason?: WireErrorV1;
  readonly updatedAt: string;
}

/** The facts of a submit that the journal records (the payload itself is not kept, only its hash). */
export interface JournalSubmit {
  readonly requestId: string;
  readonly callId: string;
  readonly tool: string;
  readonly payloadSha256: string;
  readonly deadline: string;
  readonly verdict: RiskVerdictV1;
}

/**
 * Result of {@link DeviceJournal.admit}: `new` (journaled now), `duplicate` (known with the same bytes, or sealed
 * before it arrived; `entry` is the original record) or `conflict` (known with different bytes).
 */
export type Admission =
  | { readonly kind: 'new'; readonly entry: JournalEntry }
  | { readonly kind: 'duplicate'; readonly entry: JournalEntry }
  | { readonly kind: 'conflict'; readonly entry: JournalEntry };

/** A state change the journal's state machine does not allow (a bug in the caller, or a corrupt file on reload). */
export class JournalTransitionError extends OrmuzError {
  readonly code = 'journal_transition';
  constructor(
    readonly requestId: string,
    readonly from: JournalState | 'absent',
    readonly op: string,
  ) {
    super(`Request ${requestId} cannot be ${op} in the journal while it is ${from}.`);
  }
}

/** The journal file cannot be read back; it is left untouched so nothing is lost. */
export class JournalCorruptError extends OrmuzError {
  readonly code = 'journal_corrupt';
  constructor(
    readonly path: string,
    readonly line: number,
    reason: string,
  ) {
    super(
      `The device journal ${path} is corrupt at line ${line}: ${reason}. Move the file aside to inspect it; do not delete it, it records which requests already ran.`,
    );
  }
}

/** Another journal instance holds the directory; two writers would break run-at-most-once. */
export class JournalLockedError extends OrmuzError {
  readonly code = 'journal_locked';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `The device journal in ${dir} is in use by process ${pid}. Stop that device client first, or use another journal directory.`,
    );
  }
}

type JournalRecord =
  | {
      op: 'received';
      id: string;
      at: string;
      call_id: string;
      tool: string;
      payload_sha256: string;
      deadline: string;
      verdict: RiskVerdictV1;
    }
  | { op: 'claimed'; id: string; at: string }
  | { op: 'started'; id: string; at: string; boot_id: string }
  | { op: 'outcome'; id: string; at: string; outcome: JournalOutcome }
  | { op: 'acked'; id: string; at: string }
  | { op: 'refused' | 'rejected' | 'sealed'; id: string; at: string; reason?: WireErrorV1 };

const JOURNAL_FILE = 'journal.jsonl';
const LOCK_FILE = 'journal.lock';
const openJournals = new Set<string>();

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The entry after one record; the single definition of the journal's state machine, for writes and reloads. */
function transition(current: JournalEntry | undefined, record: JournalRecord): JournalEntry {
  const from = current?.state ?? 'absent';
  const fail = (): never => {
    throw new JournalTransitionError(record.id, from, record.op);
  };
  let next: JournalEntry;
  switch (record.op) {
    case 'received':
      if (current) fail();
      next = {
        requestId: record.id,
        state: 'received',
        callId: record.call_id,
        tool: record.tool,
        payloadSha256: record.payload_sha256,
        deadline: record.deadline,
        verdict: record.verdict,
        receivedAt: record.at,
        acked: false,
        updatedAt: record.at,
      };
      break;
    case 'claimed':
      if (from !== 'received') fail();
      next = { ...current!, state: 'claimed', updatedAt: record.at };
      break;
    case 'started':
      if (from !== 'claimed') fail();
      next = {
        ...current!,
        state: 'started',
        startedAt: record.at,
        startedBootId: record.boot_id,
        updatedAt: record.at,
      };
      break;
    case 'outcome':
      if (from !== 'started') fail();
      next = { ...current!, state: record.outcome.status, outcome: record.outcome, updatedAt: record.at };
      break;
    case 'acked':
      if (from !== 'succeeded' && from !== 'failed') fail();
      next = { ...current!, acked: true, updatedAt: record.at };
      break;
    case 'refused':
    case 'rejected':
      if (from !== 'received' && from !== 'claimed') fail();
      next = { ...current!, state: record.op, reason: record.reason, updatedAt: record.at };
      break;
    case 'sealed':
      if (from !== 'absent' && from !== 'received' && from !== 'claimed') fail();
      next = current
        ? { ...current, state: 'sealed', reason: record.reason, updatedAt: record.at }
        : { requestId: record.id, state: 'sealed', acked: false, reason: record.reason, updatedAt: record.at };
      break;
    default: {
      const unknown: never = record;
      throw new Error(`unknown journal record ${JSON.stringify(unknown)}`);
    }
  }
  return next;
}

/** Options of {@link DeviceJournal.open}. */
export interface DeviceJournalOptions {
  /** Clock for record times; defaults to the system clock. */
  readonly now?: () => Date;
}

/**
 * An append-only JSON-lines journal in one directory (`journal.jsonl`), fsynced after every state change and read
 * back in full on open.
 *
 * Limits and failure modes:
 * - Writes are synchronous (write + fsync, typically well under a few milliseconds on local flash); a write that
 *   fails throws and the in-memory state is not changed, so the caller must not run the action.
 * - A torn last line (a crash during a write) never completed its fsync and is dropped on open; any other
 *   unreadable line raises {@link JournalCorruptError} and the file is left as it is.
 * - One journal per directory at a time (a lock file names the owning process); a second open raises
 *   {@link JournalLockedError} until the first is closed or its process is gone.
 * - The file grows with every request; compaction is not implemented yet.
 */
export class DeviceJournal {
  private readonly entriesById = new Map<string, JournalEntry>();
  private fd: number | undefined;

  private constructor(
    /** Directory of the journal. */
    readonly dir: string,
    private readonly now: () => Date,
  ) {}

  /**
   * Opens (creating if needed) the journal in `dir` and replays it.
   *
   * @throws JournalLockedError, JournalCorruptError, or a file-system error.
   */
  static open(dir: string, options: DeviceJournalOptions = {}): DeviceJournal {
    const absolute = resolve(dir);
    if (openJournals.has(absolute)) throw new JournalLockedError(absolute, process.pid);
    mkdirSync(absolute, { recursive: true });
    DeviceJournal.lock(absolute);
    openJournals.add(absolute);
    const journal = new DeviceJournal(absolute, options.now ?? (() => new Date()));
    try {
      journal.load();
    } catch (err) {
      journal.close();
      throw err;
    }
    return journal;
  }

  private static lock(dir: string): void {
    const lockPath = join(dir, LOCK_FILE);
    try {
      writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileSync(lockPath, 'utf8'));
    // A lock left by a process that is gone (or by this process, whose instance was not tracked as open) is stale.
    if (Number.isInteger(holder) && holder !== process.pid && processAlive(holder))
      throw new JournalLockedError(dir, holder);
    writeFileSync(lockPath, String(process.pid));
  }

  /** Path of the journal file. */
  get path(): string {
    return join(this.dir, JOURNAL_FILE);
  }

  private load(): void {
    const path = this.path;
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const complete = text.endsWith('\n') || text === '' ? text : text.slice(0, text.lastIndexOf('\n') + 1);
    const lines = complete.split('\n');
    lines.pop();
    lines.forEach((line, i) => {
      let record: JournalRecord;
      try {
        record = JSON.parse(line) as JournalRecord;
      } catch (err) {
        throw new JournalCorruptError(path, i + 1, (err as Error).message);
      }
      try {
        this.entriesById.set(record.id, transition(this.entriesById.get(record.id), record));
      } catch (err) {
        throw new JournalCorruptError(path, i + 1, (err as Error).message);
      }
    });
    this.fd = openSync(path, 'a');
    if (complete.length !== text.length) {
      ftruncateSync(this.fd, Buffer.byteLength(complete, 'utf8'));
      fsyncSync(this.fd);
    }
    if (text === '') {
      // Make the new file's directory entry durable too, or a crash could lose the whole journal.
      const dirFd = openSync(this.dir, 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
    }
  }

  private append(record: JournalRecord): JournalEntry {
    if (this.fd === undefined) throw new Error(`the device journal in ${this.dir} is closed`);
    const entry = transition(this.entriesById.get(record.id), record);
    writeSync(this.fd, `${JSON.stringify(record)}\n`);
    fsyncSync(this.fd);
    this.entriesById.set(record.id, entry);
    return entry;
  }

  private at(): string {
    return this.now().toISOString();
  }

  /** The entry of a request, or `undefined` when the journal has never heard of it. */
  get(requestId: string): JournalEntry | undefined {
    return this.entriesById.get(requestId);
  }

  /** Every entry, in the order the requests were first recorded. */
  entries(): JournalEntry[] {
    return [...this.entriesById.values()];
  }

  /**
   * Records a submitted request unless its id is known. A known id is a `duplicate` when its payload hash matches
   * (or it was sealed before it arrived) and a `conflict` otherwise; neither writes anything.
   */
  admit(submit: JournalSubmit): Admission {
    const existing = this.entriesById.get(submit.requestId);
    if (existing) {
      const conflict = existing.payloadSha256 !== undefined && existing.payloadSha256 !== submit.payloadSha256;
      return { kind: conflict ? 'conflict' : 'duplicate', entry: existing };
    }
    const entry = this.append({
      op: 'received',
      id: submit.requestId,
      at: this.at(),
      call_id: submit.callId,
      tool: submit.tool,
      payload_sha256: submit.payloadSha256,
      deadline: submit.deadline,
      verdict: submit.verdict,
    });
    return { kind: 'new', entry };
  }

  /** `received` → `claimed`: a start claim is being sent. @throws JournalTransitionError */
  markClaimed(requestId: string): JournalEntry {
    return this.append({ op: 'claimed', id: requestId, at: this.at() });
  }

  /** `claimed` → `started`; call before the executor runs. @throws JournalTransitionError */
  markStarted(requestId: string, bootId: string): JournalEntry {
    return this.append({ op: 'started', id: requestId, at: this.at(), boot_id: bootId });
  }

  /** `started` → `succeeded` | `failed`. @throws JournalTransitionError */
  recordOutcome(requestId: string, outcome: JournalOutcome): JournalEntry {
    return this.append({ op: 'outcome', id: requestId, at: this.at(), outcome });
  }

  /** The server recorded the outcome; it is no longer resent. Repeated acks are ignored. @throws JournalTransitionError */
  markAcked(requestId: string): JournalEntry {
    const entry = this.entriesById.get(requestId);
    if (entry?.acked) return entry;
    return this.append({ op: 'acked', id: requestId, at: this.at() });
  }

  /** `received` | `claimed` → `refused`: the server refused the start claim. @throws JournalTransitionError */
  markRefused(requestId: string, reason: WireErrorV1): JournalEntry {
    return this.append({ op: 'refused', id: requestId, at: this.at(), reason });
  }

  /** `received` | `claimed` → `rejected`: the device refused to run it. @throws JournalTransitionError */
  markRejected(requestId: string, reason: WireErrorV1): JournalEntry {
    return this.append({ op: 'rejected', id: requestId, at: this.at(), reason });
  }

  /** True when a seal would be honoured: the request is unknown or has not started. */
  canSeal(requestId: string): boolean {
    const state = this.entriesById.get(requestId)?.state;
    return state === undefined || state === 'received' || state === 'claimed' || state === 'sealed';
  }

  /**
   * Seals an unknown or unstarted request so no later delivery runs it. Sealing a sealed request changes nothing.
   * @throws JournalTransitionError when it has started or ended otherwise (check {@link canSeal}).
   */
  seal(requestId: string, reason?: WireErrorV1): JournalEntry {
    const entry = this.entriesById.get(requestId);
    if (entry?.state === 'sealed') return entry;
    return this.append({ op: 'sealed', id: requestId, at: this.at(), ...(reason ? { reason } : {}) });
  }

  /** Requests with an outcome the server has not acknowledged, oldest first. */
  unackedOutcomes(): JournalEntry[] {
    return this.entries().filter((e) => e.outcome !== undefined && !e.acked);
  }

  /** Closes the file and releases the directory. Idempotent. */
  close(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
    if (openJournals.delete(this.dir)) rmSync(join(this.dir, LOCK_FILE), { force: true });
  }
}
