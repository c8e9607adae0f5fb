import {
  canonicalPayload,
  isOrmuzError,
  MAX_TOOL_CALL_PAYLOAD_BYTES,
  OUTCOME_UNKNOWN_CAUSES,
  ToolCallEventType as T,
} from '@ormuz/contracts';
import { deciderSpec } from '@ormuz/testing';
import type { ToolCallCommand } from './tool-call.commands.js';
import { decide, evolve, initialState, statusView, toolCallDecider } from './tool-call.decider.js';
import {
  ApprovalAlreadyDecidedError,
  ApprovalExpiredError,
  ApprovalMismatchError,
  ApprovalNotYetExpiredError,
  ApprovalRequiredError,
  CallAlreadyStartedError,
  CallNotFoundError,
  InvalidCommandError,
  InvalidTransitionError,
  isApprovalMismatchError,
  isCallAlreadyStartedError,
  isPayloadConflictError,
  isSealedCallError,
  isToolCallError,
  OutcomeConflictError,
  PayloadConflictError,
  PayloadTooLargeError,
  RequestMismatchError,
  SealedCallError,
  ToolCallErrorCode,
  UnexpectedEventError,
} from './tool-call.errors.js';
import {
  APPROVAL_ID,
  ARGS,
  CALL_ID,
  cmd,
  CONTRACT,
  DEADLINE,
  decision,
  ev,
  EXPIRES_AT,
  NOW,
  OTHER_ARGS,
  REQUEST_ID,
} from './tool-call.fixtures.js';
import type { ToolCallState } from './tool-call.state.js';

/** Given these events, when this command is decided (at `NOW` unless given), then these events, or this error. */
const { given } = deciderSpec(toolCallDecider, { now: NOW });

const at = (iso: string) => new Date(iso);
const staged = [ev.requested(), ev.staged()];
const approvedCall = [...staged, ev.approved(), ev.authorizedByApproval()];
const authorized = [ev.requested(), ev.authorized()];
const dispatched = [...authorized, ev.dispatched()];
const started = [...dispatched, ev.started()];
const succeeded = [...started, ev.succeeded()];
const failed = [...started, ev.failed()];
const unknown = [...started, ev.outcomeUnknown()];

describe('submit', () => {
  it('records a new call with its canonical bytes and their hash before anything else', () => {
    given().when(cmd.submit()).then([ev.requested()]);
  });

  it.each([
    ['requested', [ev.requested()]],
    ['staged', staged],
    ['started', started],
    ['succeeded', succeeded],
    ['sealed', [ev.requested(), ev.sealed()]],
  ])('observes the original when the same id and bytes arrive again (%s)', (_status, history) => {
    given(...history)
      .when(cmd.submit())
      .then([]);
  });

  it('refuses the same id with different bytes as a conflict that names the id', () => {
    given(ev.requested())
      .when(cmd.submit({ payload: OTHER_ARGS.payload, payload_sha256: OTHER_ARGS.sha256 }))
      .thenThrows(PayloadConflictError, new RegExp(`Call ${CALL_ID} was already submitted as another request`));
  });

  it.each([
    [
      'tool',
      { tool: 'messaging.delete_message' },
      /the tool was messaging\.send_message, now messaging\.delete_message/,
    ],
    ['agent', { agent_id: 'agent-2' }, /the agent was agent-1, now agent-2/],
    ['device', { target: { device_id: 'pixel-8' } }, /the device was pixel-7, now pixel-8/],
    ['device (none now)', { target: null }, /the device was pixel-7, now none/],
    ['contract version', { contract_version: 'v4-0a1b2c' }, /the contract version was v3-9f2c1e, now v4-0a1b2c/],
  ] as const)('refuses the same id with another %s as a conflict that says what differs', (_field, change, message) => {
    given(ev.requested()).when(cmd.submit(change)).thenThrows(PayloadConflictError, message);
  });

  it('refuses the same id with a device when the original had none', () => {
    given(ev.requested({ target: null }))
      .when(cmd.submit())
      .thenThrows(PayloadConflictError, /the device was none, now pixel-7/);
  });

  it('lists every difference at once', () => {
    const other = { agent_id: 'agent-2', target: null, payload: OTHER_ARGS.payload, payload_sha256: OTHER_ARGS.sha256 };
    const thrown = given(ev.requested()).when(cmd.submit(other)).thenThrows(PayloadConflictError);
    expect(thrown.differences.map((d) => d.field)).toEqual(['agent', 'device', 'arguments']);
    expect(thrown.code).toBe('payload_conflict');
    expect(thrown.message).toBe(
      `Call ${CALL_ID} was already submitted as another request (the agent was agent-1, now agent-2; the device was ` +
        `pixel-7, now none; the arguments hash (sha256) was ${ARGS.sha256}, now ${OTHER_ARGS.sha256}); one call id ` +
        `identifies one request of one agent on one target. Check call ${CALL_ID}'s status instead of resubmitting, ` +
        `and send a changed action as a new call (a new operation id).`,
    );
  });

  it('refuses a hash that is not the hash of the payload', () => {
    given()
      .when(cmd.submit({ payload_sha256: OTHER_ARGS.sha256 }))
      .thenThrows(InvalidCommandError, /not the SHA-256/);
  });

  it('counts the payload limit in UTF-8 bytes, not characters', () => {
    // 131,073 two-byte characters: fewer characters than the limit, more bytes.
    const big = canonicalPayload({ t: 'é'.repeat(MAX_TOOL_CALL_PAYLOAD_BYTES / 2) });
    expect(big.payload.length).toBeLessThan(MAX_TOOL_CALL_PAYLOAD_BYTES);
    given()
      .when(cmd.submit({ payload: big.payload, payload_sha256: big.sha256 }))
      .thenThrows(PayloadTooLargeError, /at most 262144 are accepted/);
  });

  it('accepts a payload of exactly the limit', () => {
    const exact = canonicalPayload({ t: 'x'.repeat(MAX_TOOL_CALL_PAYLOAD_BYTES - 8) });
    expect(Buffer.byteLength(exact.payload)).toBe(MAX_TOOL_CALL_PAYLOAD_BYTES);
    const events = decide(cmd.submit({ payload: exact.payload, payload_sha256: exact.sha256 }), initialState, NOW);
    expect(events).toHaveLength(1);
  });

  it('refuses a submit decided against another call', () => {
    given(ev.requested())
      .when(cmd.submit({ call_id: 'call_ffffffffffffffffffffffffffffffff' }))
      .thenThrows(InvalidCommandError, /decided against call/);
  });
});

describe('submit with the gate decision', () => {
  it.each([
    ['refused', decision.refuse(), ev.refused()],
    ['staged', decision.stage(), ev.staged()],
    ['authorized', decision.authorize(), ev.authorized()],
  ] as const)('records the request and its decision in one list (%s)', (_status, gate, decided) => {
    given().when(cmd.submitDecided(gate)).then([ev.requested(), decided]);
  });

  it('leaves the call in the decided state, never in requested', () => {
    expect(given().when(cmd.submitDecided(decision.stage())).state.status).toBe('staged');
    expect(given().when(cmd.submitDecided(decision.authorize())).state.status).toBe('authorized');
  });

  it.each([
    ['authorized', authorized],
    ['staged', staged],
    ['refused', [ev.requested(), ev.refused()]],
    ['started', started],
    // An older version recorded the request alone; its caller decides it with the decision's own command.
    ['requested', [ev.requested()]],
  ])('observes the original when the same request arrives again (%s), whatever decision it carries', (_s, history) => {
    given(...history)
      .when(cmd.submitDecided(decision.refuse()))
      .then([]);
  });

  it('checks the decision as its own command would, and records nothing when it is refused', () => {
    given()
      .when(cmd.submitDecided(decision.stage({ expires_at: NOW.toISOString() })))
      .thenThrows(InvalidCommandError, /not after/);
    given()
      .when(cmd.submitDecided(decision.stage({ verdict: { level: 'low', reasons: [] } as never })))
      .thenThrows(InvalidCommandError, /high-risk/);
    given()
      .when(cmd.submitDecided(decision.authorize({ verdict: { level: 'high', reasons: ['pays'] } as never })))
      .thenThrows(ApprovalRequiredError);
  });

  it('checks the request before the decision', () => {
    given()
      .when(cmd.submitDecided(decision.authorize(), { payload_sha256: OTHER_ARGS.sha256 }))
      .thenThrows(InvalidCommandError, /not the SHA-256/);
  });

  it('keeps the decision out of the recorded request', () => {
    const [requested] = given().when(cmd.submitDecided(decision.authorize())).events;
    expect(requested!.data).not.toHaveProperty('decision');
  });
});

describe('any command but submit', () => {
  it.each([
    cmd.refuse(),
    cmd.stage(),
    cmd.authorize(),
    cmd.approve(),
    cmd.deny(),
    cmd.expire(),
    cmd.dispatch(),
    cmd.seal(),
    cmd.claimStart(),
    cmd.succeed(),
    cmd.markUnknown(),
  ])('is refused on a call that does not exist ($type)', (command) => {
    given()
      .when(command)
      .thenThrows(CallNotFoundError, /Submit the call first/);
  });

  it('is refused when decided against the state of another call', () => {
    given(ev.requested())
      .when(cmd.seal({ call_id: 'call_ffffffffffffffffffffffffffffffff' }))
      .thenThrows(InvalidCommandError);
  });
});

describe('policy decision', () => {
  it('refuses a requested call with a sentence for the model', () => {
    given(ev.requested()).when(cmd.refuse()).then([ev.refused()]);
  });

  it('stages a high-risk call, binding the recorded hash and contract version', () => {
    given(ev.requested()).when(cmd.stage()).then([ev.staged()]);
  });

  it('authorises a low-risk call without an approval', () => {
    given(ev.requested()).when(cmd.authorize()).then([ev.authorized()]);
  });

  it('never authorises a high-risk call directly', () => {
    given(ev.requested())
      .when(cmd.authorize({ verdict: { level: 'high', reasons: ['pays'] } as never }))
      .thenThrows(ApprovalRequiredError, /Stage it/);
  });

  it('refuses to stage a low-risk verdict', () => {
    given(ev.requested())
      .when(cmd.stage({ verdict: { level: 'low', reasons: [] } as never }))
      .thenThrows(InvalidCommandError, /high-risk/);
  });

  it('refuses an approval window that has already closed or cannot be read', () => {
    given(ev.requested())
      .when(cmd.stage({ expires_at: NOW.toISOString() }))
      .thenThrows(InvalidCommandError, /not after/);
    given(ev.requested())
      .when(cmd.stage({ expires_at: 'tomorrow' }))
      .thenThrows(InvalidCommandError, /RFC 3339/);
  });

  it('observes a repeated identical decision', () => {
    given(ev.requested(), ev.refused()).when(cmd.refuse()).then([]);
    given(...staged)
      .when(cmd.stage())
      .then([]);
    given(...authorized)
      .when(cmd.authorize())
      .then([]);
    given(...dispatched)
      .when(cmd.authorize())
      .then([]);
  });

  it('is only taken from requested', () => {
    given(...authorized)
      .when(cmd.refuse())
      .thenThrows(InvalidTransitionError, /is authorized, so RefuseCall is not possible/);
    given(ev.requested(), ev.refused())
      .when(cmd.stage())
      .thenThrows(InvalidTransitionError, /will not run/);
    given(...staged)
      .when(cmd.authorize())
      .thenThrows(InvalidTransitionError, /waits for the owner's confirmation/);
    given(ev.requested(), ev.refused())
      .when(cmd.refuse({ reason_code: 'other_reason' }))
      .thenThrows(InvalidTransitionError);
    given(...started)
      .when(cmd.stage({ approval_id: 'apr-2' }))
      .thenThrows(InvalidTransitionError);
  });

  it('tells the policy that a sealed call will not run', () => {
    given(ev.requested(), ev.sealed())
      .when(cmd.authorize())
      .thenThrows(SealedCallError, /sealed by owner-1/);
    given(ev.requested(), ev.sealed()).when(cmd.stage()).thenThrows(SealedCallError);
    given(ev.requested(), ev.sealed()).when(cmd.refuse()).thenThrows(SealedCallError);
  });
});

describe('approve', () => {
  it('approves and authorises in one decision, carrying the staged verdict and the approval id', () => {
    given(...staged)
      .when(cmd.approve())
      .then([ev.approved(), ev.authorizedByApproval()]);
  });

  it('binds to the approval id, the payload hash and the contract version', () => {
    given(...staged)
      .when(cmd.approve({ approval_id: 'apr-other' }))
      .thenThrows(ApprovalMismatchError, /approval is apr_/);
    given(...staged)
      .when(cmd.approve({ payload_sha256: OTHER_ARGS.sha256 }))
      .thenThrows(ApprovalMismatchError, new RegExp(`payload sha256 is ${ARGS.sha256}`));
    given(...staged)
      .when(cmd.approve({ contract_version: 'v4' }))
      .thenThrows(ApprovalMismatchError, /contract version is v3/);
  });

  it('is refused at the expiry instant and accepted just before it', () => {
    given(...staged)
      .when(cmd.approve(), at(EXPIRES_AT))
      .thenThrows(ApprovalExpiredError, /can no longer be approved/);
    given(...staged)
      .when(cmd.approve(), new Date(Date.parse(EXPIRES_AT) - 1))
      .then([ev.approved(), ev.authorizedByApproval()]);
  });

  it('is single use: the same decision again observes the first', () => {
    given(...approvedCall)
      .when(cmd.approve())
      .then([]);
    given(...approvedCall, ev.dispatched(), ev.started())
      .when(cmd.approve())
      .then([]);
  });

  it('refuses a second decision by someone else', () => {
    given(...approvedCall)
      .when(cmd.approve({ decided_by: 'owner-2' }))
      .thenThrows(ApprovalAlreadyDecidedError, /approved by owner-1/);
  });

  it('says when the first decision was recorded once the handler that read the log adds its time', () => {
    const err = new ApprovalAlreadyDecidedError(CALL_ID, APPROVAL_ID, 'denied', 'owner-1').at(
      '2030-01-01T00:02:00.000Z',
    );
    expect(err).toBeInstanceOf(ApprovalAlreadyDecidedError);
    expect(err.decidedAt).toBe('2030-01-01T00:02:00.000Z');
    expect(err.message).toMatch(/already denied by owner-1 at 2030-01-01T00:02:00\.000Z; .* changed nothing/);
  });

  it('refuses an approval after a denial or an expiry', () => {
    given(...staged, ev.denied())
      .when(cmd.approve())
      .thenThrows(ApprovalAlreadyDecidedError, /denied by owner-1/);
    given(...staged, ev.expired())
      .when(cmd.approve())
      .thenThrows(ApprovalExpiredError);
  });

  it('refuses an approval of a sealed call', () => {
    given(...staged, ev.sealed())
      .when(cmd.approve())
      .thenThrows(SealedCallError, /will not run/);
  });

  it('is only possible on a call that was staged', () => {
    given(ev.requested()).when(cmd.approve()).thenThrows(InvalidTransitionError);
    given(...authorized)
      .when(cmd.approve())
      .thenThrows(InvalidTransitionError);
  });
});

describe('deny', () => {
  it('denies a staged call and records who decided', () => {
    given(...staged)
      .when(cmd.deny())
      .then([ev.denied()]);
    given(...staged)
      .when(cmd.deny({ reason: null }))
      .then([ev.denied({ reason: null })]);
  });

  it('observes the same denial again and refuses a second decider', () => {
    given(...staged, ev.denied())
      .when(cmd.deny())
      .then([]);
    given(...staged, ev.denied())
      .when(cmd.deny({ decided_by: 'owner-2' }))
      .thenThrows(ApprovalAlreadyDecidedError);
  });

  it('refuses a denial after an approval, after an expiry, or for another approval', () => {
    given(...approvedCall)
      .when(cmd.deny())
      .thenThrows(ApprovalAlreadyDecidedError, /approved by owner-1/);
    given(...staged, ev.expired())
      .when(cmd.deny())
      .thenThrows(ApprovalExpiredError);
    given(...staged)
      .when(cmd.deny({ approval_id: 'apr-other' }))
      .thenThrows(ApprovalMismatchError);
  });

  it('refuses a denial of a sealed call or of a call with no approval', () => {
    given(...staged, ev.sealed())
      .when(cmd.deny())
      .thenThrows(SealedCallError);
    given(...authorized)
      .when(cmd.deny())
      .thenThrows(InvalidTransitionError);
  });
});

describe('expire', () => {
  it('expires a staged approval at or after its expiry time', () => {
    given(...staged)
      .when(cmd.expire(), at(EXPIRES_AT))
      .then([ev.expired()]);
  });

  it('refuses to expire an approval that is still open', () => {
    given(...staged)
      .when(cmd.expire(), NOW)
      .thenThrows(ApprovalNotYetExpiredError, /open until/);
  });

  it('does nothing for an approval that was already closed', () => {
    given(...staged, ev.expired())
      .when(cmd.expire(), at(EXPIRES_AT))
      .then([]);
    given(...approvedCall)
      .when(cmd.expire(), at(EXPIRES_AT))
      .then([]);
    given(...staged, ev.denied())
      .when(cmd.expire(), at(EXPIRES_AT))
      .then([]);
    given(...staged, ev.sealed())
      .when(cmd.expire(), at(EXPIRES_AT))
      .then([]);
  });

  it('refuses another approval id and calls that were never staged', () => {
    given(...staged)
      .when(cmd.expire({ approval_id: 'apr-other' }), at(EXPIRES_AT))
      .thenThrows(ApprovalMismatchError);
    given(...authorized)
      .when(cmd.expire(), at(EXPIRES_AT))
      .thenThrows(InvalidTransitionError);
  });
});

describe('dispatch', () => {
  it('hands an authorised call to its executor with the recorded hash', () => {
    given(...authorized)
      .when(cmd.dispatch())
      .then([ev.dispatched()]);
    given(...approvedCall)
      .when(cmd.dispatch())
      .then([ev.dispatched()]);
  });

  it('observes a second dispatch with the same request id', () => {
    given(...dispatched)
      .when(cmd.dispatch())
      .then([]);
    given(...succeeded)
      .when(cmd.dispatch())
      .then([]);
  });

  it('refuses another request for a call already dispatched or started', () => {
    given(...dispatched)
      .when(cmd.dispatch({ request_id: 'req_2' }))
      .thenThrows(InvalidTransitionError, /was sent to its executor/);
    given(...started)
      .when(cmd.dispatch({ request_id: 'req_2' }))
      .thenThrows(CallAlreadyStartedError);
  });

  it('hands a call without a device target to the platform service that runs it', () => {
    const platform = { kind: 'platform', service: 'model-loop' } as const;
    given(ev.requested({ target: null }), ev.authorized())
      .when(cmd.dispatch({ executor: platform }))
      .then([ev.dispatched({ executor: platform })]);
  });

  it('refuses to hand a call aimed at a device to the platform', () => {
    given(...authorized)
      .when(cmd.dispatch({ executor: { kind: 'platform', service: 'model-loop' } }))
      .thenThrows(InvalidCommandError, /only that device may run it/);
  });

  it('is only possible once authorised', () => {
    given(ev.requested()).when(cmd.dispatch()).thenThrows(InvalidTransitionError);
    given(...staged)
      .when(cmd.dispatch())
      .thenThrows(InvalidTransitionError);
    given(...staged, ev.denied())
      .when(cmd.dispatch())
      .thenThrows(InvalidTransitionError, /will not run/);
  });

  it('refuses a sealed call', () => {
    given(...authorized, ev.sealed())
      .when(cmd.dispatch())
      .thenThrows(SealedCallError);
    given(...dispatched, ev.sealed())
      .when(cmd.dispatch())
      .thenThrows(SealedCallError);
  });

  it('refuses a deadline that has passed', () => {
    given(...authorized)
      .when(cmd.dispatch(), at(DEADLINE))
      .thenThrows(InvalidCommandError, /deadline/);
  });
});

describe('seal', () => {
  it.each([
    ['requested', [ev.requested()]],
    ['staged', staged],
    ['approved', [...staged, ev.approved()]],
    ['authorized', authorized],
    ['dispatched', dispatched],
  ])('seals a call that has not started (%s)', (_status, history) => {
    given(...history)
      .when(cmd.seal())
      .then([ev.sealed()]);
  });

  it('observes a second seal', () => {
    given(...dispatched, ev.sealed())
      .when(cmd.seal({ sealed_by: 'owner-2' }))
      .then([]);
  });

  it.each([
    ['started', started],
    ['outcome_unknown', unknown],
    ['succeeded', succeeded],
    ['failed', failed],
  ])('refuses a call that has already started (%s)', (_status, history) => {
    given(...history)
      .when(cmd.seal())
      .thenThrows(CallAlreadyStartedError, /can no longer be sealed/);
  });

  it('refuses a call that will never run', () => {
    given(ev.requested(), ev.refused()).when(cmd.seal()).thenThrows(InvalidTransitionError);
    given(...staged, ev.denied())
      .when(cmd.seal())
      .thenThrows(InvalidTransitionError);
    given(...staged, ev.expired())
      .when(cmd.seal())
      .thenThrows(InvalidTransitionError);
  });
});

describe('claim start', () => {
  it('lets the executor of the current request start', () => {
    given(...dispatched)
      .when(cmd.claimStart())
      .then([ev.started()]);
  });

  it('refuses a request that is not the current delivery', () => {
    given(...dispatched)
      .when(cmd.claimStart({ request_id: 'req_0' }))
      .thenThrows(RequestMismatchError, /Do not run it/);
  });

  it('tells the loser of the race against a seal that the call is sealed', () => {
    given(...dispatched, ev.sealed())
      .when(cmd.claimStart())
      .thenThrows(SealedCallError, /sealed by owner-1 \(Changed my mind\.\) and will not run\. Submit a new call/);
  });

  it('observes a repeated claim by the winning executor and boot', () => {
    given(...started)
      .when(cmd.claimStart())
      .then([]);
  });

  it('refuses a claim by another boot or executor', () => {
    given(...started)
      .when(cmd.claimStart({ boot_id: 'boot-2' }))
      .thenThrows(CallAlreadyStartedError, /Do not run it/);
    given(...started)
      .when(cmd.claimStart({ executor_id: 'worker-9' }))
      .thenThrows(CallAlreadyStartedError);
  });

  it('refuses any claim once the outcome is recorded or unknown, even by the same boot', () => {
    given(...unknown)
      .when(cmd.claimStart())
      .thenThrows(CallAlreadyStartedError);
    given(...succeeded)
      .when(cmd.claimStart())
      .thenThrows(CallAlreadyStartedError);
  });

  it('is only possible once dispatched', () => {
    given(...authorized)
      .when(cmd.claimStart())
      .thenThrows(InvalidTransitionError);
  });
});

describe('record outcome', () => {
  it('records success or failure of a started call', () => {
    given(...started)
      .when(cmd.succeed())
      .then([ev.succeeded()]);
    given(...started)
      .when(cmd.fail())
      .then([ev.failed()]);
  });

  it('still records a late real outcome after the outcome became unknown', () => {
    given(...unknown)
      .when(cmd.succeed())
      .then([ev.succeeded()]);
    given(...unknown)
      .when(cmd.fail())
      .then([ev.failed()]);
  });

  it('observes the same outcome again, whatever the key order of the result', () => {
    given(...succeeded)
      .when(cmd.succeed({ sent: true, message_id: 'm-1' }))
      .then([]);
    given(...failed)
      .when(cmd.fail())
      .then([]);
  });

  it('refuses a different outcome after a final one', () => {
    given(...succeeded)
      .when(cmd.fail())
      .thenThrows(OutcomeConflictError, /already has a recorded outcome \(succeeded\)/);
    given(...failed)
      .when(cmd.succeed())
      .thenThrows(OutcomeConflictError);
    given(...succeeded)
      .when(cmd.succeed({ sent: false }))
      .thenThrows(OutcomeConflictError);
  });

  it('refuses an outcome for another request', () => {
    given(...started)
      .when(cmd.succeed(null, { request_id: 'req_0' }))
      .thenThrows(RequestMismatchError);
    given(...succeeded)
      .when(cmd.succeed(null, { request_id: 'req_0' }))
      .thenThrows(RequestMismatchError);
  });

  it('refuses an outcome for a call no executor started', () => {
    given(...dispatched)
      .when(cmd.succeed())
      .thenThrows(InvalidTransitionError);
    given(...dispatched, ev.sealed())
      .when(cmd.succeed())
      .thenThrows(SealedCallError);
  });
});

describe('mark outcome unknown', () => {
  it.each(OUTCOME_UNKNOWN_CAUSES)('turns a started call into outcome_unknown (%s)', (cause) => {
    given(...started)
      .when(cmd.markUnknown({ cause }))
      .then([ev.outcomeUnknown({ cause })]);
  });

  it('does nothing for a dispatched call that never won its start claim: it did not run', () => {
    given(...dispatched)
      .when(cmd.markUnknown({ cause: 'timeout' }))
      .then([]);
  });

  it('does nothing once the outcome is known, already unknown, or the call was sealed', () => {
    given(...succeeded)
      .when(cmd.markUnknown())
      .then([]);
    given(...failed)
      .when(cmd.markUnknown())
      .then([]);
    given(...unknown)
      .when(cmd.markUnknown({ cause: 'reboot' }))
      .then([]);
    given(...dispatched, ev.sealed())
      .when(cmd.markUnknown())
      .then([]);
  });

  it('refuses another request and calls that were never dispatched', () => {
    given(...started)
      .when(cmd.markUnknown({ request_id: 'req_0' }))
      .thenThrows(RequestMismatchError);
    given(...authorized)
      .when(cmd.markUnknown())
      .thenThrows(InvalidTransitionError);
  });
});

describe('succeeded', () => {
  it('is produced by no command but an executor outcome report, from any state', () => {
    const histories = [
      [],
      [ev.requested()],
      staged,
      [...staged, ev.approved()],
      approvedCall,
      dispatched,
      started,
      unknown,
      failed,
      [...dispatched, ev.sealed()],
    ];
    const commands = Object.values(cmd)
      .map((make) => (make as () => ToolCallCommand)())
      .filter((c) => c.type !== 'RecordOutcome');
    for (const history of histories) {
      const state = history.reduce<ToolCallState>((s, e) => evolve(s, e), initialState);
      for (const command of commands) {
        for (const now of [NOW, at(EXPIRES_AT)]) {
          try {
            expect(decide(command, state, now).map((e) => e.type)).not.toContain(T.Succeeded);
          } catch (err) {
            expect(isToolCallError(err)).toBe(true);
          }
        }
      }
    }
  });
});

describe('evolve', () => {
  it('refuses an event that cannot follow the current status', () => {
    expect(() => given(...authorized, ev.started())).toThrow(UnexpectedEventError);
    expect(() => given(...started, ev.sealed())).toThrow(UnexpectedEventError);
    expect(() => given(ev.requested(), ev.requested())).toThrow(/inconsistent/);
  });

  it('refuses an event of another call', () => {
    expect(() => given(ev.requested(), ev.refused({ call_id: 'call_ffffffffffffffffffffffffffffffff' }))).toThrow(
      UnexpectedEventError,
    );
  });

  it('keeps state that survives a JSON round trip (it is stored as a snapshot)', () => {
    for (const history of [approvedCall, unknown, [...unknown, ev.succeeded()], [...dispatched, ev.sealed()]]) {
      const { state } = given(...history);
      expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    }
  });

  it('keeps what later decisions need', () => {
    const { state } = given(...approvedCall, ev.dispatched(), ev.started(), ev.outcomeUnknown(), ev.succeeded());
    expect(state).toMatchObject({
      status: 'succeeded',
      call: {
        call_id: CALL_ID,
        tool: 'messaging.send_message',
        payload_sha256: ARGS.sha256,
        contract_version: CONTRACT,
      },
      approval: { approval_id: APPROVAL_ID, expires_at: EXPIRES_AT, decided_by: 'owner-1' },
      dispatch: { request_id: REQUEST_ID, deadline: DEADLINE },
      start: { executor_id: 'pixel-7', boot_id: 'boot-1' },
      outcome: { kind: 'succeeded' },
      unknown: { cause: 'connection_lost' },
    });
  });

  it('is the decider the event log runs', () => {
    expect(toolCallDecider).toMatchObject({ initialState, evolve, decide, stateVersion: 1 });
  });
});

describe('statusView', () => {
  it('tells the model to check the real state with a read before any retry when the outcome is unknown', () => {
    const view = statusView(given(...unknown).state);
    expect(view).toMatchObject({
      status: 'outcome_unknown',
      call_id: CALL_ID,
      unknown_cause: 'connection_lost',
      outcome: null,
    });
    expect(view.next_step).toMatch(/may or may not have happened/);
    expect(view.next_step).toMatch(/Check the action's real state with a read before any retry/);
  });

  it('reports the outcome, the pending approval and the seal', () => {
    expect(statusView(given(...succeeded).state)).toMatchObject({
      status: 'succeeded',
      tool: 'messaging.send_message',
      payload_sha256: ARGS.sha256,
      outcome: { kind: 'succeeded', result: { message_id: 'm-1', sent: true } },
      unknown_cause: null,
    });
    expect(statusView(given(...staged).state).pending_approval).toEqual({
      approval_id: APPROVAL_ID,
      summary: 'Send "The report is ready." to alice.',
      expires_at: EXPIRES_AT,
    });
    expect(statusView(given(ev.requested(), ev.sealed()).state)).toMatchObject({ sealed_by: 'owner-1' });
  });

  it('answers for an unknown call without inventing values', () => {
    expect(statusView(initialState)).toMatchObject({
      status: 'absent',
      call_id: null,
      tool: null,
      payload_sha256: null,
    });
  });

  it('is read-only', () => {
    expect(Object.isFrozen(statusView(given(...started).state))).toBe(true);
  });
});

describe('errors', () => {
  it('carry a stable code and no transport status, and have predicates', () => {
    const err: unknown = given(...dispatched, ev.sealed())
      .when(cmd.claimStart())
      .thenThrows(Error);
    expect(isSealedCallError(err)).toBe(true);
    expect(isOrmuzError(err, ToolCallErrorCode.CallSealed)).toBe(true);
    expect(isCallAlreadyStartedError(err)).toBe(false);
    expect(isPayloadConflictError(err)).toBe(false);
    expect(isApprovalMismatchError(new ApprovalMismatchError(CALL_ID, APPROVAL_ID, ['x']))).toBe(true);
    expect(err).toMatchObject({ name: 'SealedCallError', callId: CALL_ID, sealedBy: 'owner-1' });
    expect(Object.keys(err as object)).not.toContain('status');
  });

  it('have distinct codes', () => {
    const codes = Object.values(ToolCallErrorCode);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
