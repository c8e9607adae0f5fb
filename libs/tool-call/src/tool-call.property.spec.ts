// Concurrency property of the tool-call decider: independent actors share one in-memory log with per-subject optimistic
// concurrency, exactly as services do against JetStream (load at version v, decide, append only if the log is still at
// v, otherwise reload and decide again). For every interleaving fast-check finds, the action runs at most once, never
// after a seal, `succeeded` only comes from an executor's report, and folding the log gives the states deciders saw.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import {
  assertValid,
  OUTCOME_UNKNOWN_CAUSES,
  ToolCallEventType as T,
  type OutcomeUnknownCauseV1,
  type ToolCallEventDraft,
} from '@ormuz/contracts';
import type { SubmitCall, ToolCallCommand } from './tool-call.commands.js';
import { decide, evolve, initialState, statusView } from './tool-call.decider.js';
import {
  ApprovalAlreadyDecidedError,
  ApprovalExpiredError,
  ApprovalMismatchError,
  ApprovalNotYetExpiredError,
  CallAlreadyStartedError,
  CallNotFoundError,
  InvalidTransitionError,
  PayloadConflictError,
  SealedCallError,
} from './tool-call.errors.js';
import { APPROVAL_ID, ARGS, CALL_ID, cmd, DEVICE_ID, OTHER_ARGS } from './tool-call.fixtures.js';
import type { ToolCallState } from './tool-call.state.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const MAX_ATTEMPTS = 5;
const DRAIN_ROUNDS = 30;

type ErrorClass = abstract new (...args: never[]) => Error;

interface Appended {
  readonly event: ToolCallEventDraft;
  readonly actor: string;
  readonly command: ToolCallCommand;
}

/** The shared log, the snapshots stored beside it, and what the actors did. */
class World {
  readonly log: Appended[] = [];
  /** snapshots[v]: state after v events, stored as JSON like a real snapshot. Deciders read these. */
  readonly snapshots: ToolCallState[] = [initialState];
  readonly runs: { actor: string; boot: string; startIndex: number }[] = [];
  tick = 0;
  conflicts = 0;

  get version(): number {
    return this.log.length;
  }

  now(): Date {
    return new Date(T0 + this.tick * 1000);
  }

  read(): { version: number; state: ToolCallState } {
    return { version: this.version, state: this.snapshots[this.version]! };
  }

  /** Appends when the log is still at `expected`; returns the index of the first event, or -1 on a conflict. */
  append(expected: number, events: ToolCallEventDraft[], actor: string, command: ToolCallCommand): number {
    if (this.version !== expected) {
      this.conflicts++;
      return -1;
    }
    const first = this.version;
    let state = this.snapshots[this.version]!;
    for (const event of events) {
      assertValid(event.type, event.data);
      this.log.push({ event, actor, command });
      state = JSON.parse(JSON.stringify(evolve(state, event))) as ToolCallState;
      this.snapshots.push(state);
    }
    return first;
  }
}

type Result = 'appended' | 'noop' | 'gave_up' | Error | null;

/**
 * An actor that, each time it is scheduled, either loads and decides (keeping the events to append next time), or
 * tries to append what it decided. Errors it expects are either "not yet" (wait and decide again once the log moves)
 * or final (stop). Any other error fails the property.
 */
abstract class Actor {
  done = false;
  result: Result = null;
  private pending: { version: number; command: ToolCallCommand; events: ToolCallEventDraft[] } | null = null;
  private waitedAt = -1;
  private attempts = 0;
  protected waitFor: ErrorClass[] = [CallNotFoundError, InvalidTransitionError];
  protected stopOn: ErrorClass[] = [];
  /** Set while the actor waits for the clock rather than for the log: it decides again even if the log did not move. */
  protected waitingForTime = false;

  constructor(readonly name: string) {}

  /** The command to send now, or `null` to wait. */
  protected abstract next(state: ToolCallState, w: World): ToolCallCommand | null;
  /** Called after this actor's events were appended at `index`; returns whether the actor is finished. */
  protected appended(_command: ToolCallCommand, _index: number, _w: World): boolean {
    return true;
  }
  /** Called when the decision was `[]`; returns whether the actor is finished. */
  protected noop(_command: ToolCallCommand, _w: World): boolean {
    return true;
  }

  /** Whether the actor may still act while the log stays put: it waits for the clock or holds decided events. */
  get mayActLater(): boolean {
    return !this.done && (this.waitingForTime || this.pending !== null);
  }

  /** One scheduling slot. Returns whether anything happened (a decision or an append attempt). */
  step(w: World): boolean {
    if (this.done) return false;
    if (this.pending) {
      const { version, command, events } = this.pending;
      this.pending = null;
      const index = w.append(version, events, this.name, command);
      if (index < 0) {
        if (++this.attempts >= MAX_ATTEMPTS) this.finish('gave_up');
        return true;
      }
      this.attempts = 0;
      this.result = 'appended';
      if (this.appended(command, index, w)) this.done = true;
      return true;
    }
    if (!this.waitingForTime && this.waitedAt === w.version) return false;
    this.waitingForTime = false;
    const { version, state } = w.read();
    const command = this.next(state, w);
    if (!command) {
      this.waitedAt = version;
      return false;
    }
    let events: ToolCallEventDraft[];
    try {
      events = decide(command, state, w.now());
    } catch (err) {
      if (this.waitFor.some((c) => err instanceof c)) {
        this.waitedAt = version;
        this.waitingForTime = err instanceof ApprovalNotYetExpiredError;
        return false;
      }
      if (this.stopOn.some((c) => err instanceof c)) {
        this.finish(err as Error);
        return true;
      }
      throw new Error(`${this.name} got an unexpected ${String(err)} deciding ${command.type} at ${state.status}`);
    }
    if (events.length === 0) {
      this.result = 'noop';
      if (this.noop(command, w)) this.done = true;
      return true;
    }
    this.pending = { version, command, events };
    return true;
  }

  private finish(result: Result): void {
    this.result = result;
    this.done = true;
  }
}

/** Sends one command until it is appended or observed; waits and stops as configured. */
class OneShot extends Actor {
  constructor(
    name: string,
    private readonly command: ToolCallCommand | ((w: World, state: ToolCallState) => ToolCallCommand),
    options: { waitFor?: ErrorClass[]; stopOn?: ErrorClass[]; notBefore?: number } = {},
  ) {
    super(name);
    if (options.waitFor) this.waitFor = options.waitFor;
    this.stopOn = options.stopOn ?? [];
    this.notBefore = options.notBefore ?? 0;
  }

  private readonly notBefore: number;

  protected next(state: ToolCallState, w: World): ToolCallCommand | null {
    if (w.tick < this.notBefore) {
      this.waitingForTime = true;
      return null;
    }
    return typeof this.command === 'function' ? this.command(w, state) : this.command;
  }
}

/** A submitter, remembering which bytes it sent. */
class Submitter extends OneShot {
  constructor(
    name: string,
    readonly sha256: string,
    ...rest: ConstructorParameters<typeof OneShot> extends [string, ...infer R] ? R : never
  ) {
    super(name, ...rest);
  }
}

type Report = 'success' | 'failure' | 'twice' | 'late' | 'never';

/**
 * A device executor: the delivery reaches it `claimDelay` ticks after the dispatch; it claims the start, runs the
 * action only once its claim is appended, then reports.
 */
class Executor extends Actor {
  private phase: 'claim' | 'report' | 'report_again' = 'claim';
  private ranAtTick = -1;
  private deliveredAtTick = -1;

  constructor(
    name: string,
    private readonly boot: string,
    private readonly report: Report,
    private readonly claimDelay: number,
  ) {
    super(name);
    this.stopOn = [SealedCallError, CallAlreadyStartedError];
  }

  protected next(state: ToolCallState, w: World): ToolCallCommand | null {
    if (this.phase === 'claim') {
      if (this.deliveredAtTick < 0) {
        // Before any dispatch the executor has nothing to claim; it tries anyway (and is told it is not possible).
        if (!('dispatch' in state && state.dispatch)) return this.claim();
        this.deliveredAtTick = w.tick + this.claimDelay;
      }
      if (w.tick >= this.deliveredAtTick) return this.claim();
      this.waitingForTime = true;
      return null;
    }
    // A late reporter stays silent until the runtime has given up on it or a while has passed.
    if (this.report === 'late' && state.status !== 'outcome_unknown' && w.tick - this.ranAtTick < 20) {
      this.waitingForTime = true;
      return null;
    }
    return this.report === 'failure' ? cmd.fail() : cmd.succeed({ message_id: 'm-1', sent: true });
  }

  private claim(): ToolCallCommand {
    return cmd.claimStart({ executor_id: DEVICE_ID, boot_id: this.boot });
  }

  protected override appended(command: ToolCallCommand, index: number, w: World): boolean {
    if (command.type === 'ClaimStart') {
      // The claim is in the log: this executor, and only now, runs the action.
      w.runs.push({ actor: this.name, boot: this.boot, startIndex: index });
      this.ranAtTick = w.tick;
      this.phase = 'report';
      this.stopOn = [];
      this.waitFor = [];
      return this.report === 'never';
    }
    if (this.phase === 'report' && this.report === 'twice') {
      this.phase = 'report_again';
      return false;
    }
    return true;
  }

  protected override noop(command: ToolCallCommand): boolean {
    if (command.type === 'ClaimStart') throw new Error(`${this.name} observed a claim it never appended`);
    if (this.phase === 'report_again') return true;
    throw new Error(`${this.name}'s first outcome report was a no-op`);
  }
}

/** The bridge's watchdog: some ticks after the delivery it loses sight of the executor and says so, once. */
class Watchdog extends Actor {
  private dispatchedAtTick = -1;

  constructor(
    private readonly cause: OutcomeUnknownCauseV1,
    private readonly delay: number,
  ) {
    super(`watchdog (${cause})`);
  }

  protected next(state: ToolCallState, w: World): ToolCallCommand | null {
    if (this.dispatchedAtTick < 0 && 'dispatch' in state && state.dispatch) this.dispatchedAtTick = w.tick;
    if (this.dispatchedAtTick < 0) return null;
    if (w.tick - this.dispatchedAtTick < this.delay) {
      this.waitingForTime = true;
      return null;
    }
    return cmd.markUnknown({ cause: this.cause, detail: 'observed by the bridge' });
  }
}

/** A status query: reads the log, answers, and must never append or change anything. */
class StatusReader extends Actor {
  views = 0;

  protected next(state: ToolCallState, w: World): null {
    const before = w.version;
    const view = statusView(state);
    if (w.version !== before) throw new Error('a status query changed the log');
    if (view.status !== state.status) throw new Error('status view disagrees with the state');
    if (view.status === 'outcome_unknown' && !/read before any retry/.test(view.next_step)) {
      throw new Error('an unknown outcome did not tell the model to check with a read before retrying');
    }
    this.views++;
    return null;
  }
}

interface Scenario {
  readonly policy: 'authorize' | 'stage' | 'refuse';
  readonly owner: 'approve' | 'approve_wrong_hash' | 'deny' | 'none';
  readonly secondOwner: 'approve' | 'deny' | 'none';
  readonly expirySeconds: number;
  readonly conflictingSubmitter: boolean;
  readonly sealer: boolean;
  readonly rebootedExecutor: boolean;
  readonly dispatcherRetry: boolean;
  readonly report: Report;
  readonly watchdog: OutcomeUnknownCauseV1 | null;
  readonly watchdogDelay: number;
  /** Ticks before the owner acts, the second owner acts, the owner seals. */
  readonly ownerAt: number;
  readonly secondOwnerAt: number;
  readonly sealAt: number;
  /** Ticks from the dispatch until the delivery reaches each executor. */
  readonly claimDelay: number;
  readonly rebootClaimDelay: number;
  readonly schedule: readonly number[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  policy: fc.oneof(
    { weight: 3, arbitrary: fc.constant('authorize' as const) },
    { weight: 3, arbitrary: fc.constant('stage' as const) },
    { weight: 1, arbitrary: fc.constant('refuse' as const) },
  ),
  owner: fc.constantFrom(
    'approve' as const,
    'approve' as const,
    'approve_wrong_hash' as const,
    'deny' as const,
    'none' as const,
  ),
  secondOwner: fc.constantFrom('approve' as const, 'deny' as const, 'none' as const, 'none' as const),
  expirySeconds: fc.integer({ min: 1, max: 60 }),
  conflictingSubmitter: fc.boolean(),
  sealer: fc.boolean(),
  rebootedExecutor: fc.boolean(),
  dispatcherRetry: fc.boolean(),
  report: fc.constantFrom<Report>('success', 'failure', 'twice', 'late', 'never'),
  watchdog: fc.option(fc.constantFrom(...OUTCOME_UNKNOWN_CAUSES), { freq: 2 }),
  watchdogDelay: fc.nat(30),
  ownerAt: fc.nat(60),
  secondOwnerAt: fc.nat(60),
  sealAt: fc.nat(40),
  claimDelay: fc.nat(20),
  rebootClaimDelay: fc.nat(40),
  schedule: fc.array(fc.nat(), { maxLength: 100 }),
});

function cast(s: Scenario) {
  const submitter = (name: string, bytes = ARGS) =>
    new Submitter(name, bytes.sha256, cmd.submit({ payload: bytes.payload, payload_sha256: bytes.sha256 }), {
      waitFor: [],
      stopOn: [PayloadConflictError],
    });
  const submitters = [submitter('submitter'), submitter('duplicate submitter')];
  if (s.conflictingSubmitter) submitters.push(submitter('conflicting submitter', OTHER_ARGS));

  // The policy opens the approval window at the moment it decides.
  const policyCommand = (w: World) =>
    s.policy === 'authorize'
      ? cmd.authorize()
      : s.policy === 'stage'
        ? cmd.stage({ expires_at: new Date(w.now().getTime() + s.expirySeconds * 1000).toISOString() })
        : cmd.refuse();
  const actors: Actor[] = [
    ...submitters,
    new OneShot('policy', policyCommand, { waitFor: [CallNotFoundError], stopOn: [SealedCallError] }),
    new OneShot('dispatcher', cmd.dispatch({ deadline: '2031-01-01T00:00:00.000Z' }), {
      stopOn: [SealedCallError, CallAlreadyStartedError],
    }),
    new Executor('executor', 'boot-1', s.report, s.claimDelay),
    new StatusReader('status reader'),
  ];
  if (s.dispatcherRetry) {
    actors.push(
      new OneShot('dispatcher retry', cmd.dispatch({ deadline: '2031-01-01T00:00:00.000Z' }), {
        stopOn: [SealedCallError, CallAlreadyStartedError],
      }),
    );
  }
  if (s.policy === 'stage') {
    const decisionStops = [ApprovalExpiredError, ApprovalAlreadyDecidedError, SealedCallError];
    // An owner approves the bytes the approval showed; the careless one approves bytes the call does not carry.
    const shown = (state: ToolCallState) => (state.status === 'absent' ? ARGS.sha256 : state.call.payload_sha256);
    const notShown = (state: ToolCallState) => (shown(state) === ARGS.sha256 ? OTHER_ARGS.sha256 : ARGS.sha256);
    if (s.owner !== 'none') {
      const command =
        s.owner === 'deny'
          ? cmd.deny()
          : (_w: World, state: ToolCallState) =>
              cmd.approve({ payload_sha256: s.owner === 'approve_wrong_hash' ? notShown(state) : shown(state) });
      actors.push(
        new OneShot('owner', command, {
          stopOn: s.owner === 'approve_wrong_hash' ? [ApprovalMismatchError, ...decisionStops] : decisionStops,
          notBefore: s.ownerAt,
        }),
      );
    }
    if (s.secondOwner !== 'none') {
      const command =
        s.secondOwner === 'deny'
          ? cmd.deny({ decided_by: 'owner-2' })
          : (_w: World, state: ToolCallState) => cmd.approve({ decided_by: 'owner-2', payload_sha256: shown(state) });
      actors.push(new OneShot('second owner', command, { stopOn: decisionStops, notBefore: s.secondOwnerAt }));
    }
    actors.push(
      new OneShot('expiry timer', cmd.expire({ approval_id: APPROVAL_ID }), {
        waitFor: [CallNotFoundError, InvalidTransitionError, ApprovalNotYetExpiredError],
        stopOn: [SealedCallError],
      }),
    );
  }
  if (s.sealer) {
    actors.push(
      new OneShot('owner sealing', cmd.seal(), {
        waitFor: [CallNotFoundError],
        stopOn: [CallAlreadyStartedError, InvalidTransitionError],
        notBefore: s.sealAt,
      }),
    );
  }
  if (s.rebootedExecutor) actors.push(new Executor('executor after reboot', 'boot-2', 'success', s.rebootClaimDelay));
  if (s.watchdog) actors.push(new Watchdog(s.watchdog, s.watchdogDelay));
  return actors;
}

const seen = {
  runs: 0,
  succeeded: 0,
  lateOutcome: 0,
  sealedBeforeStart: 0,
  sealRefusedAfterStart: 0,
  claimLostToSeal: 0,
  claimLostToOtherBoot: 0,
  conflicts: 0,
  payloadConflicts: 0,
  approvalsExpired: 0,
  unknownWithoutStart: 0,
};

function check(s: Scenario, w: World, actors: Actor[]): void {
  const types = w.log.map((a) => a.event.type);
  const count = (type: string) => types.filter((t) => t === type).length;
  const fail = (message: string): never => {
    throw new Error(`${message}\nlog: ${types.join(' → ')}`);
  };

  // The action runs at most once, only after its claim was appended, and never after a seal.
  if (w.runs.length > 1) fail(`the action ran ${w.runs.length} times`);
  for (const run of w.runs) {
    const claim = w.log[run.startIndex];
    if (claim?.event.type !== T.Started || claim.actor !== run.actor)
      fail(`${run.actor} ran without its appended claim`);
    if (types.slice(0, run.startIndex).includes(T.Sealed)) fail('the action ran after a seal was appended');
  }
  if (count(T.Sealed) > 0 && count(T.Started) > 0) fail('a call was both sealed and started');
  if (count(T.Started) !== w.runs.length) fail('a start claim was appended but no executor ran');

  // `succeeded` only from an executor's outcome report, and only once.
  for (const appended of w.log) {
    if (appended.event.type !== T.Succeeded) continue;
    const c = appended.command;
    if (c.type !== 'RecordOutcome' || c.data.outcome.kind !== 'succeeded' || !appended.actor.startsWith('executor')) {
      fail(`succeeded was produced by ${appended.actor}'s ${c.type}`);
    }
    if (w.runs.length !== 1) fail('succeeded without a run');
  }
  if (count(T.Succeeded) + count(T.Failed) > 1) fail('more than one final outcome');
  if (count(T.Requested) > 1 || (w.log.length > 0 && types[0] !== T.Requested)) fail('the call was requested twice');
  if (count(T.Sealed) > 1 || count(T.Started) > 1 || count(T.Dispatched) > 1) fail('a one-time event repeated');

  // Folding the log from scratch gives exactly the snapshots the deciders read.
  let state: ToolCallState = initialState;
  for (let v = 0; v < w.log.length; v++) {
    state = evolve(state, w.log[v]!.event);
    if (!isDeepStrictEqual(state, w.snapshots[v + 1]))
      fail(`evolve over the log differs from the snapshot at ${v + 1}`);
  }

  // A duplicate with the same bytes observes the original; different bytes are a conflict naming the id.
  const recorded = w.log[0]?.command;
  for (const actor of actors) {
    if (!(actor instanceof Submitter) || actor.result === null || actor.result === 'gave_up') continue;
    if (recorded?.type !== 'SubmitCall') fail('a submitter finished but nothing was requested');
    const same = actor.sha256 === (recorded as SubmitCall).data.payload_sha256;
    if (same && !(actor.result === 'appended' || actor.result === 'noop'))
      fail(`${actor.name} with the same bytes got ${actor.result}`);
    if (!same && !(actor.result instanceof PayloadConflictError && actor.result.message.includes(CALL_ID))) {
      fail(`${actor.name} with other bytes got ${String(actor.result)}`);
    }
    if (!same) seen.payloadConflicts++;
  }
  if (w.log.some((a) => a.actor === 'owner' && s.owner === 'approve_wrong_hash'))
    fail('an approval of other bytes was appended');

  // Coverage bookkeeping: the property must see the interesting races, not only easy paths.
  seen.runs += w.runs.length;
  seen.succeeded += count(T.Succeeded);
  seen.conflicts += w.conflicts;
  seen.approvalsExpired += count(T.Expired);
  const unknownAt = types.indexOf(T.OutcomeUnknown);
  if (unknownAt >= 0 && types.slice(unknownAt).some((t) => t === T.Succeeded || t === T.Failed)) seen.lateOutcome++;
  if (count(T.Sealed) > 0 && actors.some((a) => a.name === 'executor' && a.result instanceof SealedCallError)) {
    seen.claimLostToSeal++;
  }
  if (count(T.Sealed) > 0 && count(T.Dispatched) > 0) seen.sealedBeforeStart++;
  if (actors.some((a) => a.name === 'owner sealing' && a.result instanceof CallAlreadyStartedError))
    seen.sealRefusedAfterStart++;
  if (actors.some((a) => a.name.startsWith('executor') && a.result instanceof CallAlreadyStartedError))
    seen.claimLostToOtherBoot++;
  if (
    actors.some((a) => a.name.startsWith('watchdog') && a.result === 'noop') &&
    count(T.Started) === 0 &&
    count(T.Dispatched) > 0
  ) {
    seen.unknownWithoutStart++;
  }
}

function play(s: Scenario): void {
  const w = new World();
  const actors = cast(s);
  for (const slot of s.schedule) {
    w.tick++;
    actors[slot % actors.length]!.step(w);
  }
  // Then let everyone finish, round robin, until nothing moves and no one waits on the clock.
  for (let round = 0; round < DRAIN_ROUNDS; round++) {
    let moved = false;
    for (const actor of actors) {
      w.tick++;
      moved = actor.step(w) || moved;
    }
    if (!moved && !actors.some((a) => a.mayActLater)) break;
  }
  check(s, w, actors);
}

describe('tool call under concurrent actors', () => {
  it('runs the action at most once, never after a seal, and records succeeded only from an executor', () => {
    // Refused commands are answered with errors by design; their stack traces are most of the run time and unused.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      fc.assert(
        fc.property(scenario, (s) => play(s)),
        { numRuns: 10_000 },
      );
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    expect(seen).toEqual({
      runs: expect.any(Number),
      succeeded: expect.any(Number),
      lateOutcome: expect.any(Number),
      sealedBeforeStart: expect.any(Number),
      sealRefusedAfterStart: expect.any(Number),
      claimLostToSeal: expect.any(Number),
      claimLostToOtherBoot: expect.any(Number),
      conflicts: expect.any(Number),
      payloadConflicts: expect.any(Number),
      approvalsExpired: expect.any(Number),
      unknownWithoutStart: expect.any(Number),
    });
    for (const [what, times] of Object.entries(seen)) {
      if (times === 0) throw new Error(`no run exercised ${what}; the property is not reaching that race`);
    }
  });
});
