/**
 * What an app plugs into the device client: the executor that runs a tool call, the resolver that names the app an
 * action acts in, and the error an executor throws to choose the code the platform sees.
 */
import { OrmuzError, type JsonValue, type RiskVerdictV1 } from '@ormuz/contracts';

/** Arguments of a tool call, as decoded from the submitted canonical payload. */
export type ToolArguments = { readonly [key: string]: JsonValue };

/** What an executor gets besides the tool name and arguments. */
export interface ExecutionContext {
  readonly requestId: string;
  readonly callId: string;
  readonly verdict: RiskVerdictV1;
  /** When the outcome is due, on the device clock (corrected by the server's clock at connect time). */
  readonly deadline: Date;
  /** Aborted when the server cancels the request, its deadline passes, or the client closes. Honour it if you can. */
  readonly signal: AbortSignal;
  /** Reports progress to the server, best effort (dropped while disconnected). `fraction` is between 0 and 1. */
  progress(stage: string, fraction?: number): void;
}

/**
 * Runs one tool call and resolves with its result (plain JSON), or throws to report a failure: throw a
 * {@link DeviceToolError} to choose the error code; any other error is reported as `executor_failed`, or as
 * `cancelled` / `deadline_exceeded` when the context's signal had fired.
 * It runs only after the start claim was granted, and never twice for one request id.
 */
export type DeviceExecutor = (tool: string, args: ToolArguments, context: ExecutionContext) => Promise<JsonValue>;

/**
 * Names the app an action would act in, so the device's own package policy applies before anything runs:
 * a package name (checked against the denylist), `null` when the action acts on the foreground app and the device
 * cannot tell which app that is (refused), or `undefined` when the action acts on no app.
 */
export type TargetPackageResolver = (tool: string, args: ToolArguments) => string | null | undefined;

/**
 * A tool failure reported to the platform as `{ code, message }`. `code` is snake_case (other codes become
 * `executor_failed`); the message is read by a model, so it should say what to do next.
 */
export class DeviceToolError extends OrmuzError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
