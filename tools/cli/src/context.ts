/**
 * What every CLI command needs: where NATS is, which namespace, how to print. Read once from options and env.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { assertIdentifier, OrmuzError, type RpcName, type RpcReplyOf, type RpcRequestOf } from '@ormuz/contracts';
import { connectNats } from '@ormuz/event-log';
import {
  callRpc,
  loadBaseConfig,
  RemoteError,
  streamRpc,
  type BaseConfig,
  type ReceivedPart,
  type UnansweredHint,
} from '@ormuz/service-kit/client';

/** What to do without a credential, on a machine that uses the development issuer. */
const SIGN_IN_HINT =
  'Pass --auth-token, or set ORMUZ_TOKEN: a token from your identity provider, an API key (`ormuz keys issue`), or on a ' +
  'development machine `export ORMUZ_TOKEN=$(npx ormuz auth token --tenant <tenant> --role operator --sub <you>)`.';

/** `err`, saying how to sign in when it was refused for want of a credential and none was given. */
function withSignInHint(err: unknown, token: string | undefined): unknown {
  if (!token && err instanceof RemoteError && err.code === 'unauthenticated') {
    return new RemoteError(err.code, `${err.message} ${SIGN_IN_HINT}`, err.details);
  }
  return err;
}

export interface GlobalOptions {
  readonly json?: boolean;
  readonly nats?: string;
  readonly namespace?: string;
  /** A bearer token or an API key (`--auth-token`, else `ORMUZ_TOKEN`). */
  readonly authToken?: string;
}

/** What a command may set before the context is made: a namespace used when neither `--namespace` nor env names one. */
export interface CliDefaults {
  readonly namespace?: string;
}

export class CliContext {
  private connection: Promise<NatsConnection> | undefined;
  private presented: string | undefined;
  private settings: BaseConfig;

  constructor(
    readonly options: GlobalOptions,
    defaults: CliDefaults = {},
  ) {
    this.settings = loadBaseConfig({
      ...process.env,
      ...(!process.env.ORMUZ_NAMESPACE && defaults.namespace ? { ORMUZ_NAMESPACE: defaults.namespace } : {}),
      ...(options.nats ? { NATS_URL: options.nats } : {}),
      ...(options.namespace ? { ORMUZ_NAMESPACE: options.namespace } : {}),
    });
  }

  /** The settings read from options and environment, with what {@link useNats} replaced. */
  get config(): BaseConfig {
    return this.settings;
  }

  /**
   * Points the context at another NATS server and user: the demo's own server, started after the context was made.
   * Only before the first connection, so that one command never talks to two servers.
   */
  useNats(nats: { readonly url: string; readonly user?: string; readonly password?: string }): void {
    if (this.connection)
      throw new Error('The CLI is connected to NATS already; useNats() comes before the first call.');
    this.settings = Object.freeze({
      ...this.settings,
      natsUrl: nats.url,
      natsUser: nats.user,
      natsPassword: nats.password,
    });
  }

  /** One connection for the whole command, also when several requests start at once. */
  nc(): Promise<NatsConnection> {
    const { natsUrl: url, natsUser: user, natsPassword: password } = this.config;
    this.connection ??= connectNats({ url, name: 'ormuz-cli', user, password });
    return this.connection;
  }

  /**
   * Sends command `name` (`<service>.<name>`, typed by the contracts' command map) and returns its data; remote errors
   * are thrown with their code. `options` is the timeout in milliseconds (default 10 s) or `{ timeoutMs,
   * ifUnanswered }`: a command that changes state passes `ifUnanswered`, so that a lost answer says whether it may
   * have taken effect. `credential` presents another bearer token or API key than {@link token} for this one call
   * (the demo starts its agent's conversation with the agent's key).
   */
  async call<N extends RpcName>(
    name: N,
    body: NoInfer<RpcRequestOf<N>>,
    options: number | { timeoutMs?: number; ifUnanswered?: UnansweredHint; credential?: string } = {},
  ): Promise<NoInfer<RpcReplyOf<N>>> {
    const {
      timeoutMs = 10_000,
      ifUnanswered,
      credential,
    } = typeof options === 'number' ? { timeoutMs: options } : options;
    const token = credential ?? this.token();
    try {
      return await callRpc(await this.nc(), this.config.namespace, name, body, {
        timeoutMs,
        ifUnanswered,
        ...(token ? { credential: { bearer: token } } : {}),
      });
    } catch (err) {
      throw withSignInHint(err, token);
    }
  }

  /**
   * Sends command `name`, answered in parts, and yields each part as it arrives; returns the final reply's data.
   * Throws as {@link call} does, and `service_unavailable` when nothing comes for `idleMs` or a part is lost.
   */
  async *stream<N extends RpcName>(
    name: N,
    body: NoInfer<RpcRequestOf<N>>,
    idleMs = 30_000,
  ): AsyncGenerator<ReceivedPart, NoInfer<RpcReplyOf<N>>> {
    const token = this.token();
    try {
      return yield* streamRpc(await this.nc(), this.config.namespace, name, body, {
        idleMs,
        ...(token ? { credential: { bearer: token } } : {}),
      });
    } catch (err) {
      throw withSignInHint(err, token);
    }
  }

  /** The credential this command presents: one set with {@link presentToken}, else `--auth-token`, else `ORMUZ_TOKEN`. */
  token(): string | undefined {
    return this.presented || this.options.authToken || process.env.ORMUZ_TOKEN || undefined;
  }

  /** Presents `token` on every later call (the demo acts as its operator). */
  presentToken(token: string): void {
    this.presented = token;
  }

  /** Prints `data` as one JSON line with --json, otherwise with the human renderer. */
  print(data: unknown, human: (data: never) => string): void {
    process.stdout.write(this.options.json ? `${JSON.stringify(data)}\n` : `${human(data as never)}\n`);
  }

  /** Drains the connection; safe to call again (the demo closes it before it stops its own server). */
  async close(): Promise<void> {
    const nc = await this.connection?.catch(() => undefined);
    if (nc && !nc.isClosed()) await nc.drain().catch(() => undefined);
  }
}

/** Bad input on the command line, caught before anything is sent. */
export class CliInputError extends OrmuzError {
  readonly code = 'invalid_input';
}

/** Parses a JSON option with a message that names the option. */
export function parseJsonOption(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliInputError(
      `--${name} is not valid JSON (${(err as Error).message}). Quote it for your shell, e.g. --${name} '{"k":"v"}'.`,
    );
  }
}

/** Parses a JSON option that must hold an object (tool arguments are named). */
export function parseJsonObjectOption(name: string, text: string): Record<string, unknown> {
  const value = parseJsonOption(name, text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliInputError(
      `--${name} must be a JSON object of named arguments, e.g. --${name} '{"k":"v"}', not ${text}.`,
    );
  }
  return value as Record<string, unknown>;
}

/**
 * A commander option parser for ids that end up in NATS subjects (tenant, call, operation, device, approval): a `.`,
 * `*`, `>` or space is refused here with InvalidIdentifierError naming the option, before anything is sent.
 */
export function identifier(option: string): (value: string) => string {
  return (value) => assertIdentifier(option, value);
}
