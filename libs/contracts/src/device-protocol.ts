/**
 * The device protocol: the frames a device and the device-bridge exchange over one WebSocket
 * (`ws[s]://<bridge>/v1/devices`) to run already-decided tool calls under the tracked execution protocol.
 *
 * A conversation on one connection:
 *
 * ```
 * device → hello                       server → welcome | error(fatal) + close
 * server → submit                      device → start_claim | status_report(rejected/sealed) | error
 * server → start_granted | start_refused
 * device → progress* → outcome         server → outcome_ack
 * server → status_query | seal | cancel → device → status_report
 * ```
 *
 * Rules every frame obeys:
 * - one JSON object per WebSocket text message, at most {@link DEVICE_MAX_FRAME_BYTES} UTF-8 bytes;
 * - `v` is the protocol version of the frame ({@link DEVICE_PROTOCOL_VERSION});
 * - `seq` starts at 1 on each connection and strictly increases on every frame one sender sends (gaps are allowed,
 *   so a frame the receiver refused does not wedge the ones after it); a receiver refuses a frame whose `seq` is not
 *   greater than the last one it accepted;
 * - unknown properties are refused: a new field is a new protocol version, negotiated in `hello`/`welcome`.
 *
 * The payload of a `submit` is the canonical payload text recorded by the platform; its SHA-256 travels with it and
 * every receiver checks one against the other. A mismatched submit never reaches an executor.
 */
import { sha256Hex, type JsonValue } from './canonical.js';
import { OrmuzError, isOrmuzError, SchemaViolationError } from './errors.js';
import { assertValid, registerSchema } from './schema-registry.js';
import { JudgedTargetV1 } from './events/tool-call.events.js';
import {
  fragments,
  JsonValueSchema,
  List,
  OneOf,
  Struct,
  Type,
  type Static,
  type TProperties,
  type TSchema,
} from './wire.js';

/** Version of the frames this build speaks. Carried as `v` on every frame. */
export const DEVICE_PROTOCOL_VERSION = 1 as const;

/** Largest frame either side accepts, in UTF-8 bytes of the WebSocket text message (256 KiB). */
export const DEVICE_MAX_FRAME_BYTES = 256 * 1024;

/**
 * Requests the bridge keeps in flight to a device that does not announce `max_in_flight` in its `hello` (devices
 * built before flow control): submits, status queries, seals and cancels whose final answer has not arrived.
 */
export const DEVICE_DEFAULT_MAX_IN_FLIGHT = 32;

/**
 * Largest window the bridge grants, whatever a device announces: each request in flight can make the device send a
 * few frames at once (claim or report, outcome), and all of them must fit in the bridge's per-connection queue.
 */
export const DEVICE_MAX_IN_FLIGHT_LIMIT = 256;

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** True when `value` is a valid protocol id (`request_id`, `device_id`, …): `^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`. */
export function isDeviceProtocolId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_ID.test(value);
}

/**
 * A peer's id as it may be quoted in a message: JSON-quoted and clipped to 64 characters, so an id that failed
 * validation (`a.b>`, control characters, megabytes) can be named in an `error` frame without breaking it.
 */
export function quoteDeviceProtocolId(value: string): string {
  return JSON.stringify(value.length <= 64 ? value : `${value.slice(0, 63)}…`);
}

/** HTTP path of the device WebSocket endpoint on the bridge. */
export const DEVICE_GATEWAY_PATH = '/v1/devices';

/**
 * WebSocket close codes the protocol uses. 1xxx are the standard ones (RFC 6455); 4xxx are the protocol's own.
 * A device reconnects with backoff after any of them.
 */
export const DEVICE_CLOSE_CODES = {
  /** Normal shutdown. */
  normal: 1000,
  /** The peer is going away (server or client shutting down). */
  goingAway: 1001,
  /** Failed authentication, an identity mismatch, or frames before `hello`. */
  policyViolation: 1008,
  /** A frame larger than the limit. */
  tooBig: 1009,
  /** The server failed while accepting the connection. */
  internalError: 1011,
  /** A newer connection of the same device took over. */
  replaced: 4001,
  /** No valid `hello` (server side) or `welcome` (device side) in time. */
  helloTimeout: 4002,
  /** The peer stopped answering heartbeats. */
  heartbeatTimeout: 4003,
  /** The server disconnected the device on purpose (revoked credentials, operator action). */
  disconnected: 4004,
  /** The peer sent more frames than it lets wait for processing. */
  overloaded: 4005,
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Frames
//
// Each frame is one declaration below: its JSON Schema (registered as `ormuz.device.<type>.v1`, see
// deviceFrameSchemaName) and its TypeScript type. docs/device-protocol.md describes them; these declarations decide.

const requestId = fragments.identifier;
const shortText = Type.String({ minLength: 1, maxLength: 512 });
const message = Type.String({ minLength: 1, maxLength: 4096 });
/**
 * A W3C trace context (`traceparent`, https://www.w3.org/TR/trace-context/): version, trace id, parent span id and
 * flags in lowercase hex. The all-zero ids are invalid there and refused here too.
 */
const traceparent = Type.String({
  pattern: '^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$',
});
const errorCode = Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' });

/** The fields every frame carries, then the frame's own. */
function frame<T extends string, P extends TProperties>(type: T, properties: P) {
  return Struct({
    /** Protocol version of this frame. */
    v: Type.Literal(DEVICE_PROTOCOL_VERSION),
    /** Per-connection, per-sender sequence number: starts at 1, strictly increases. */
    seq: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    type: Type.Literal(type),
    ...properties,
  });
}

/** Risk level stamped into a submitted call by the platform's classifier. */
export const RiskLevel = Type.Enum(['low', 'medium', 'high']);
export type RiskLevel = Static<typeof RiskLevel>;

/** The platform's risk verdict for a call, recorded by the device next to the request. */
export const RiskVerdictV1 = Struct({
  level: RiskLevel,
  /** Short reasons, at most 32 of at most 512 characters each; empty when nothing raised the level. */
  reasons: List(shortText, { maxItems: 32 }),
  /**
   * For a screen action: the app and element text the level was judged on. Before acting, the device resolves what
   * it would act on and refuses (`target_mismatch`, `foreground_changed`) when it differs. Absent from older servers.
   */
  judged_on: Type.Optional(JudgedTargetV1),
});
export type RiskVerdictV1 = Static<typeof RiskVerdictV1>;

/** A failure told across the wire: a stable snake_case `code` and a sentence that says what to do next. */
export const WireErrorV1 = Struct({
  /** snake_case, at most 64 characters. */
  code: errorCode,
  /** At most 4096 characters. */
  message,
});
export type WireErrorV1 = Static<typeof WireErrorV1>;

/**
 * device → server, first frame of every connection. The server answers `welcome` or a fatal `error` and closes.
 * The identity claimed here must equal the identity the token authenticates; the token decides, never the claim.
 */
export const HelloFrameV1 = frame('hello', {
  device_id: fragments.identifier,
  /** Changes on every process start of the device; lets the server tell a reconnect from a reboot. */
  boot_id: fragments.identifier,
  /** Highest protocol version the device speaks; the server answers with the version it chose. */
  protocol_version: Type.Integer({ minimum: 1, maximum: 1000 }),
  /** Version of the last policy synced to the device, or `null` when none ever was. */
  policy_version: Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 0 }),
  /** Device credential, at most 8192 characters. Never logged. */
  token: Type.String({ minLength: 1, maxLength: 8192 }),
  tenant: fragments.identifier,
  /**
   * How many requests the device takes in flight at once (1–1000): submits it has not finished, plus status queries,
   * seals and cancels it has not answered. The bridge never sends past it (capped at
   * {@link DEVICE_MAX_IN_FLIGHT_LIMIT}); absent, it uses {@link DEVICE_DEFAULT_MAX_IN_FLIGHT}.
   */
  max_in_flight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  /**
   * `true`: the device takes a `traceparent` on `submit` and may send one on `outcome`. The bridge sends it only to
   * devices that say so: an older device refuses a frame with a field it does not know.
   */
  trace_context: Type.Optional(Type.Boolean()),
});
export type HelloFrameV1 = Static<typeof HelloFrameV1>;

/** server → device, after a successful `hello`. */
export const WelcomeFrameV1 = frame('welcome', {
  /** The authenticated identity (equal to the hello's claim). */
  tenant: fragments.identifier,
  device_id: fragments.identifier,
  /** Unique per accepted connection; names the connection in the server's logs and events. */
  session_id: fragments.identifier,
  /** Protocol version chosen for this connection. */
  protocol_version: Type.Integer({ minimum: 1, maximum: 1000 }),
  /** Server clock at the time of the welcome (RFC 3339); devices use it to judge deadlines despite clock skew. */
  server_time: fragments.time,
  /** How often the server pings, in milliseconds; silence for two intervals means the peer is gone. */
  heartbeat_interval_ms: Type.Integer({ minimum: 1, maximum: 3_600_000 }),
  /** Largest frame the server accepts, in bytes. */
  max_frame_bytes: Type.Integer({ minimum: 1024 }),
  /** When the device's credential stops being accepted (RFC 3339), if it expires. */
  token_expires_at: Type.Optional(fragments.time),
  /**
   * The window the bridge keeps to for this connection: at most this many requests in flight. Sent only to a device
   * whose `hello` announced `max_in_flight`, so devices built before flow control never see the field.
   */
  max_in_flight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type WelcomeFrameV1 = Static<typeof WelcomeFrameV1>;

/**
 * server → device: run one decided tool call. The device verifies `payload_sha256` against the UTF-8 bytes of
 * `payload`, journals the request, claims the start and runs it only once the claim is granted.
 * Resending the same `request_id` with the same bytes observes the original; different bytes are a conflict.
 */
export const SubmitFrameV1 = frame('submit', {
  /** The execution's id; the key of the device journal. */
  request_id: requestId,
  /** The platform's tool-call id the request executes. */
  call_id: fragments.identifier,
  /** Catalog name, `<extension>.<snake_case>` (`device.tap`). */
  tool: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,62}\\.[a-z][a-z0-9_]{0,63}$' }),
  /** Canonical JSON text of the arguments (an object); exactly the recorded bytes. */
  payload: Type.String({ minLength: 2 }),
  /** Lowercase hex SHA-256 of `payload`'s UTF-8 bytes. */
  payload_sha256: fragments.sha256,
  /**
   * When the outcome is due (RFC 3339, server clock). The device does not start the request after it and tells the
   * executor to stop when it passes; the server treats a request without an outcome by then as outcome unknown
   * (a late real outcome is still recorded).
   */
  deadline: fragments.time,
  verdict: RiskVerdictV1,
  /**
   * The trace the dispatch belongs to (W3C `traceparent`), to devices whose `hello` announced `trace_context`: the
   * device's own span for the run is its child, and the `outcome` carries that span back.
   */
  traceparent: Type.Optional(traceparent),
});
export type SubmitFrameV1 = Static<typeof SubmitFrameV1>;

/** device → server: ask to start a submitted request. Nothing runs until `start_granted`. */
export const StartClaimFrameV1 = frame('start_claim', { request_id: requestId });
export type StartClaimFrameV1 = Static<typeof StartClaimFrameV1>;

/** server → device: the start is recorded in the log; the device may run the request once. */
export const StartGrantedFrameV1 = frame('start_granted', { request_id: requestId });
export type StartGrantedFrameV1 = Static<typeof StartGrantedFrameV1>;

/** Why a start claim lost. */
export const StartRefusalReason = Type.Enum([
  'sealed',
  'unknown_request',
  'already_started',
  'expired',
  'not_assigned',
]);
export type StartRefusalReason = Static<typeof StartRefusalReason>;

/** server → device: the claim lost; the device must not run the request. */
export const StartRefusedFrameV1 = frame('start_refused', {
  request_id: requestId,
  reason: StartRefusalReason,
  message,
});
export type StartRefusedFrameV1 = Static<typeof StartRefusedFrameV1>;

/** device → server: optional progress of a running request. */
export const ProgressFrameV1 = frame('progress', {
  request_id: requestId,
  /** Short description of the current stage, at most 256 characters. */
  stage: Type.String({ minLength: 1, maxLength: 256 }),
  /** Completed share between 0 and 1, when known. */
  fraction: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
});
export type ProgressFrameV1 = Static<typeof ProgressFrameV1>;

/** The fields of an outcome, whether it succeeded or failed. */
const outcomeFields = {
  request_id: requestId,
  /** Time the executor ran, in milliseconds, when known. */
  duration_ms: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The device's span for the run (W3C `traceparent`), when the submit carried a trace. */
  traceparent: Type.Optional(traceparent),
};

/**
 * device → server: the request ran: `succeeded` with a `result`, or `failed` with an `error` (never both). Resent
 * after every reconnect until `outcome_ack`.
 */
export const OutcomeFrameV1 = OneOf([
  frame('outcome', { ...outcomeFields, status: Type.Literal('succeeded'), result: JsonValueSchema }),
  frame('outcome', { ...outcomeFields, status: Type.Literal('failed'), error: WireErrorV1 }),
]);
export type OutcomeFrameV1 = Static<typeof OutcomeFrameV1>;

/** server → device: the outcome is recorded; the device stops resending it. */
export const OutcomeAckFrameV1 = frame('outcome_ack', { request_id: requestId });
export type OutcomeAckFrameV1 = Static<typeof OutcomeAckFrameV1>;

/** server → device: report what the journal knows about a request. Never runs anything. */
export const StatusQueryFrameV1 = frame('status_query', { request_id: requestId });
export type StatusQueryFrameV1 = Static<typeof StatusQueryFrameV1>;

/**
 * The state of a request in the device journal, as reported:
 * - `received`: journaled, no claim sent yet; `claimed`: claim sent, no answer yet;
 * - `started`: running now on this boot;
 * - `interrupted`: it started on this device, but the run did not finish in the process that started it
 *   (crash, reboot); whether the action took effect is unknown and must be checked on the device's real state;
 * - `succeeded` / `failed`: finished with an outcome;
 * - `refused`: the server refused the start claim; `rejected`: the device refused it before claiming
 *   (denylisted app, unknown foreground app, deadline passed); `sealed`: sealed before it started;
 * - `unknown`: the journal has no record of the request id.
 */
export const DeviceRequestState = Type.Enum([
  'received',
  'claimed',
  'started',
  'interrupted',
  'succeeded',
  'failed',
  'refused',
  'rejected',
  'sealed',
  'unknown',
]);
export type DeviceRequestState = Static<typeof DeviceRequestState>;

/**
 * Whether a request in this reported state is done with as far as the device goes: it will neither claim, run nor
 * report it further on its own (`received`, `claimed` and `started` are the states it still moves on from).
 */
export function isSettledRequestState(state: DeviceRequestState): boolean {
  return state !== 'received' && state !== 'claimed' && state !== 'started';
}

/** device → server: answer to `status_query`, `seal`, `cancel` or a duplicate `submit`; or an unsolicited report. */
export const StatusReportFrameV1 = frame('status_report', {
  request_id: requestId,
  state: DeviceRequestState,
  /** Hash of the payload the journal holds for this request, when it holds one. */
  payload_sha256: Type.Optional(fragments.sha256),
  /** Why the request is `refused`, `rejected` or `failed`. */
  reason: Type.Optional(WireErrorV1),
});
export type StatusReportFrameV1 = Static<typeof StatusReportFrameV1>;

/** server → device: never run this request. Honoured only while it has not started; answered with a status report. */
export const SealFrameV1 = frame('seal', { request_id: requestId });
export type SealFrameV1 = Static<typeof SealFrameV1>;

/** server → device: stop a running request (best effort) or seal an unstarted one; answered with a status report. */
export const CancelFrameV1 = frame('cancel', {
  request_id: requestId,
  /** At most 512 characters. */
  reason: Type.Optional(shortText),
});
export type CancelFrameV1 = Static<typeof CancelFrameV1>;

/** Either direction: application-level keepalive for transports that do not pass WebSocket pings. */
export const HeartbeatFrameV1 = frame('heartbeat', {});
export type HeartbeatFrameV1 = Static<typeof HeartbeatFrameV1>;

/**
 * Either direction: a frame could not be accepted or a request could not be taken. `fatal` means the sender closes
 * the connection next. `request_id` is set when the problem concerns one request.
 */
export const ErrorFrameV1 = frame('error', {
  code: errorCode,
  message,
  fatal: Type.Boolean(),
  request_id: Type.Optional(requestId),
});
export type ErrorFrameV1 = Static<typeof ErrorFrameV1>;

/** Frames a device sends. */
export type DeviceToServerFrame =
  | HelloFrameV1
  | StartClaimFrameV1
  | ProgressFrameV1
  | OutcomeFrameV1
  | StatusReportFrameV1
  | HeartbeatFrameV1
  | ErrorFrameV1;

/** Frames the server sends. */
export type ServerToDeviceFrame =
  | WelcomeFrameV1
  | SubmitFrameV1
  | StartGrantedFrameV1
  | StartRefusedFrameV1
  | OutcomeAckFrameV1
  | StatusQueryFrameV1
  | SealFrameV1
  | CancelFrameV1
  | HeartbeatFrameV1
  | ErrorFrameV1;

/** Every frame of protocol version 1, discriminated by `type`. */
export type DeviceFrame = DeviceToServerFrame | ServerToDeviceFrame;

/** The `type` of a frame. */
export type DeviceFrameType = DeviceFrame['type'];

/** The frame of a given type. */
export type DeviceFrameOf<T extends DeviceFrameType> = Extract<DeviceFrame, { type: T }>;

/** A frame before sending: `v` and `seq` are added by {@link DeviceFrameCodec.encode}. */
export type DeviceFrameDraft<F extends DeviceFrame = DeviceFrame> = F extends DeviceFrame
  ? Omit<F, 'v' | 'seq'>
  : never;

/** Frame types a device may send. */
export const DEVICE_TO_SERVER_FRAME_TYPES: ReadonlySet<DeviceFrameType> = new Set<DeviceFrameType>([
  'hello',
  'start_claim',
  'progress',
  'outcome',
  'status_report',
  'heartbeat',
  'error',
]);

/** Frame types the server may send. */
export const SERVER_TO_DEVICE_FRAME_TYPES: ReadonlySet<DeviceFrameType> = new Set<DeviceFrameType>([
  'welcome',
  'submit',
  'start_granted',
  'start_refused',
  'outcome_ack',
  'status_query',
  'seal',
  'cancel',
  'heartbeat',
  'error',
]);

/**
 * Error codes used in `error` frames by this build. The schema accepts any snake_case code so a newer peer's codes
 * still parse; these are the ones the SDK and the gateway send:
 * - frame problems: the {@link DeviceProtocolErrorCode}s;
 * - `hello_required`, `unauthenticated`, `identity_mismatch`, `hello_timeout`, `replaced`, `unexpected_frame`;
 * - `credential_revoked`, `credential_expired` (fatal: the connection's credential ended);
 * - request problems (with `request_id`): `request_conflict` (same id, different bytes), `internal`;
 * - an outcome the bridge refused to record (with `request_id`, no `outcome_ack`): `not_assigned` (another device's
 *   request), `unknown_request` (no such request of the tenant), `not_started` (its start was never recorded).
 */
export const DEVICE_ERROR_CODES = [
  'malformed_json',
  'oversized',
  'schema',
  'unsupported_version',
  'unknown_type',
  'out_of_order',
  'payload_mismatch',
  'payload_invalid',
  'hello_required',
  'unauthenticated',
  'identity_mismatch',
  'hello_timeout',
  'replaced',
  'credential_revoked',
  'credential_expired',
  'unexpected_frame',
  'request_conflict',
  'not_assigned',
  'unknown_request',
  'not_started',
  'internal',
] as const;

/**
 * Codes of a device's non-fatal `error` naming a request, by which it refuses a `submit` it will never run (its bytes
 * do not match their hash, are not an arguments object, or the id is journaled with other bytes).
 */
export const DEVICE_SUBMIT_REFUSAL_CODES: ReadonlySet<string> = new Set([
  'payload_mismatch',
  'payload_invalid',
  'request_conflict',
]);

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** What was wrong with a frame. */
export type DeviceProtocolErrorCode =
  | 'malformed_json'
  | 'oversized'
  | 'schema'
  | 'unsupported_version'
  | 'unknown_type'
  | 'out_of_order'
  | 'payload_mismatch'
  | 'payload_invalid';

/**
 * A frame that cannot be accepted. Raised by {@link parseDeviceFrame}, {@link encodeDeviceFrame},
 * {@link verifySubmitPayload} and {@link DeviceFrameCodec}. `requestId` and `frameType` are set when the frame got
 * far enough to name them, so the answer can point at the request.
 */
export class DeviceProtocolError extends OrmuzError {
  constructor(
    readonly code: DeviceProtocolErrorCode,
    message: string,
    readonly details: {
      readonly requestId?: string;
      readonly frameType?: string;
      readonly problems?: readonly string[];
    } = {},
  ) {
    super(message);
  }

  /** The request the frame named, if any. */
  get requestId(): string | undefined {
    return this.details.requestId;
  }
}

/** True when `err` is a {@link DeviceProtocolError}, optionally with the given code. */
export function isDeviceProtocolError(err: unknown, code?: DeviceProtocolErrorCode): err is DeviceProtocolError {
  return err instanceof DeviceProtocolError && isOrmuzError(err, code);
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas

/** The schema of every frame type, in the order the protocol lists them. */
const FRAME_SCHEMAS: Readonly<Record<DeviceFrameType, TSchema>> = {
  hello: HelloFrameV1,
  welcome: WelcomeFrameV1,
  submit: SubmitFrameV1,
  start_claim: StartClaimFrameV1,
  start_granted: StartGrantedFrameV1,
  start_refused: StartRefusedFrameV1,
  progress: ProgressFrameV1,
  outcome: OutcomeFrameV1,
  outcome_ack: OutcomeAckFrameV1,
  status_query: StatusQueryFrameV1,
  status_report: StatusReportFrameV1,
  seal: SealFrameV1,
  cancel: CancelFrameV1,
  heartbeat: HeartbeatFrameV1,
  error: ErrorFrameV1,
};

/** Name under which the schema of a frame type is registered in the schema registry. */
export function deviceFrameSchemaName(type: DeviceFrameType): string {
  return `ormuz.device.${type}.v${DEVICE_PROTOCOL_VERSION}`;
}

for (const [type, schema] of Object.entries(FRAME_SCHEMAS))
  registerSchema(deviceFrameSchemaName(type as DeviceFrameType), schema);

// ---------------------------------------------------------------------------------------------------------------
// Parsing and encoding

function isFrameType(value: unknown): value is DeviceFrameType {
  return typeof value === 'string' && Object.hasOwn(FRAME_SCHEMAS, value);
}

/** The frame's `request_id` when it is a valid id; an invalid one is never echoed as an id. */
function namedRequestId(value: Record<string, unknown>): string | undefined {
  return isDeviceProtocolId(value['request_id']) ? value['request_id'] : undefined;
}

function checkSize(bytes: number, maxBytes: number): void {
  if (bytes > maxBytes) {
    throw new DeviceProtocolError(
      'oversized',
      `The frame is ${bytes} bytes; the limit is ${maxBytes} bytes. Return a bounded result (partial, with a ` +
        `continuation handle) instead of one this large.`,
    );
  }
}

/** Checks an object already read from JSON: version, type, schema, and for a submit the payload hash. */
function checkFrame(value: unknown): DeviceFrame {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DeviceProtocolError(
      'schema',
      `A frame must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}.`,
    );
  }
  const record = value as Record<string, unknown>;
  const details = {
    requestId: namedRequestId(record),
    frameType: typeof record['type'] === 'string' ? record['type'].slice(0, 64) : undefined,
  };
  if (record['v'] !== DEVICE_PROTOCOL_VERSION) {
    throw new DeviceProtocolError(
      'unsupported_version',
      record['v'] === undefined
        ? `The frame has no protocol version 'v'; set v to ${DEVICE_PROTOCOL_VERSION} on every frame.`
        : `The frame speaks protocol version ${JSON.stringify(record['v'])}; this peer speaks version ` +
            `${DEVICE_PROTOCOL_VERSION}. Reconnect and send frames with v=${DEVICE_PROTOCOL_VERSION}.`,
      details,
    );
  }
  if (!isFrameType(record['type'])) {
    throw new DeviceProtocolError(
      'unknown_type',
      `The frame type ${typeof record['type'] === 'string' ? quoteDeviceProtocolId(record['type']) : JSON.stringify(record['type'])?.slice(0, 64)} is not part of protocol version ${DEVICE_PROTOCOL_VERSION}; ` +
        `known types are ${Object.keys(FRAME_SCHEMAS).join(', ')}.`,
      details,
    );
  }
  const type = record['type'];
  try {
    assertValid(deviceFrameSchemaName(type), value);
  } catch (err) {
    if (!(err instanceof SchemaViolationError)) throw err;
    throw new DeviceProtocolError('schema', `The ${type} frame is invalid: ${err.problems.join('; ')}.`, {
      ...details,
      problems: err.problems,
    });
  }
  const frame = value as DeviceFrame;
  if (frame.type === 'submit') checkPayloadHash(frame);
  return frame;
}

function checkPayloadHash(frame: SubmitFrameV1): void {
  const actual = sha256Hex(frame.payload);
  if (actual !== frame.payload_sha256) {
    throw new DeviceProtocolError(
      'payload_mismatch',
      `Request ${frame.request_id}: the payload's SHA-256 is ${actual} but the frame declares ` +
        `${frame.payload_sha256}; nothing was run. Resend the recorded payload bytes unchanged.`,
      { requestId: frame.request_id, frameType: 'submit' },
    );
  }
}

/**
 * Reads one frame from the text of a WebSocket message.
 *
 * Checks, in order: size (UTF-8 bytes, before parsing), JSON syntax, that it is an object, `v`, `type`, the type's
 * JSON Schema, and for a `submit` that `payload_sha256` is the SHA-256 of `payload`. Does not check `seq` order
 * (that needs the connection's state; see {@link DeviceFrameCodec}).
 *
 * @param maxBytes largest accepted frame in bytes; defaults to {@link DEVICE_MAX_FRAME_BYTES}.
 * @throws DeviceProtocolError with code `oversized`, `malformed_json`, `unsupported_version`, `unknown_type`,
 *   `schema` or `payload_mismatch`; its message says what to fix.
 */
export function parseDeviceFrame(text: string, maxBytes: number = DEVICE_MAX_FRAME_BYTES): DeviceFrame {
  // A string never has fewer UTF-8 bytes than UTF-16 units / 1, nor more than 3 per unit: skip the count when safe.
  if (text.length * 3 > maxBytes) checkSize(Buffer.byteLength(text, 'utf8'), maxBytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DeviceProtocolError(
      'malformed_json',
      `The frame is not valid JSON (${(err as Error).message}). Send one JSON object per WebSocket text message.`,
    );
  }
  return checkFrame(value);
}

/**
 * Serialises a complete frame (with `v` and `seq`) to the text of one WebSocket message, after checking it against
 * its schema (and a submit's payload hash), so a bug never puts an invalid frame on the wire.
 *
 * @throws DeviceProtocolError `schema`, `payload_mismatch`, or `oversized` when the text exceeds `maxBytes`.
 */
export function encodeDeviceFrame(frame: DeviceFrame, maxBytes: number = DEVICE_MAX_FRAME_BYTES): string {
  checkFrame(frame);
  const text = JSON.stringify(frame);
  checkSize(Buffer.byteLength(text, 'utf8'), maxBytes);
  return text;
}

/**
 * Re-checks a submit's payload against its hash and reads the arguments it carries.
 *
 * @returns the arguments object.
 * @throws DeviceProtocolError `payload_mismatch` when the hash differs, `payload_invalid` when the payload is not a
 *   JSON object.
 */
export function verifySubmitPayload(frame: SubmitFrameV1): { [key: string]: JsonValue } {
  checkPayloadHash(frame);
  let args: unknown;
  try {
    args = JSON.parse(frame.payload);
  } catch (err) {
    throw new DeviceProtocolError(
      'payload_invalid',
      `Request ${frame.request_id}: the payload is not JSON (${(err as Error).message}); nothing was run.`,
      { requestId: frame.request_id, frameType: 'submit' },
    );
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new DeviceProtocolError(
      'payload_invalid',
      `Request ${frame.request_id}: the payload must be a JSON object of arguments; nothing was run.`,
      { requestId: frame.request_id, frameType: 'submit' },
    );
  }
  return args as { [key: string]: JsonValue };
}

/**
 * The frame state of one connection, on either side: numbers outgoing frames and checks the order of incoming ones.
 * Create one per WebSocket connection and discard it with the connection.
 */
export class DeviceFrameCodec {
  private sent = 0;
  private received = 0;

  /** @param maxFrameBytes largest frame accepted or sent, in bytes; defaults to {@link DEVICE_MAX_FRAME_BYTES}. */
  constructor(readonly maxFrameBytes: number = DEVICE_MAX_FRAME_BYTES) {}

  /** `seq` of the last frame accepted from the peer; 0 before the first. */
  get lastReceivedSeq(): number {
    return this.received;
  }

  /** `seq` of the last frame sent; 0 before the first. */
  get lastSentSeq(): number {
    return this.sent;
  }

  /**
   * Parses an incoming frame with {@link parseDeviceFrame} and checks that its `seq` is greater than the last one
   * accepted. A refused frame does not move the sequence.
   *
   * @throws DeviceProtocolError as {@link parseDeviceFrame}, or `out_of_order`.
   */
  decode(text: string): DeviceFrame {
    const frame = parseDeviceFrame(text, this.maxFrameBytes);
    if (frame.seq <= this.received) {
      throw new DeviceProtocolError(
        'out_of_order',
        `The ${frame.type} frame has seq ${frame.seq}, not greater than the previous seq ${this.received} on this ` +
          `connection; number frames 1, 2, 3… per connection and never resend one with an old seq.`,
        { requestId: 'request_id' in frame ? frame.request_id : undefined, frameType: frame.type },
      );
    }
    this.received = frame.seq;
    return frame;
  }

  /**
   * Adds `v` and the next `seq` to a draft and serialises it with {@link encodeDeviceFrame}. A draft that fails to
   * encode does not consume a sequence number.
   *
   * @throws DeviceProtocolError as {@link encodeDeviceFrame}.
   */
  encode(draft: DeviceFrameDraft): string {
    const frame = { ...draft, v: DEVICE_PROTOCOL_VERSION, seq: this.sent + 1 } as DeviceFrame;
    const text = encodeDeviceFrame(frame, this.maxFrameBytes);
    this.sent = frame.seq;
    return text;
  }
}
