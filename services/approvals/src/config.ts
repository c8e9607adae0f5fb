import { CONTEXTS, type ContextName } from '@ormuz/contracts';
import { ConfigError, intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';

export interface ApprovalsConfig extends BaseConfig {
  /** HTTP port of the owner-facing API. Env `APPROVALS_PORT`, default 8081 (0: any free port). */
  readonly httpPort: number;
  /** HTTP bind address. Env `APPROVALS_HOST`, default 127.0.0.1. */
  readonly httpHost: string;
  /** How often pending approvals are checked for expiry, in milliseconds. Env `APPROVAL_SWEEP_MS`, default 1000. */
  readonly sweepIntervalMs: number;
  /**
   * How often a live stream opened with an API key verifies it again, so that a revocation ends the stream, in
   * milliseconds. Env `STREAM_CREDENTIAL_RECHECK_MS`, default 30000. (A JWT's stream ends at its `exp`.)
   */
  readonly streamRecheckMs: number;
  /** Webhook delivery settings (`WEBHOOK_*`). */
  readonly webhooks: WebhookSettings;
  /** The console's sign-in through the OpenID-Connect provider; undefined: only pasted tokens. */
  readonly consoleOidc: ConsoleOidcSettings | undefined;
}

/**
 * The console as a public OpenID-Connect client of the provider the services trust (`ORMUZ_AUTH_ISSUER`):
 * Authorization Code with PKCE, no secret. Set `ORMUZ_CONSOLE_OIDC_CLIENT_ID` to offer it.
 */
export interface ConsoleOidcSettings {
  /** The provider, `ORMUZ_AUTH_ISSUER`: discovered at `<issuer>/.well-known/openid-configuration`. */
  readonly issuer: string;
  /** Env `ORMUZ_CONSOLE_OIDC_CLIENT_ID`. */
  readonly clientId: string;
  /** Env `ORMUZ_CONSOLE_OIDC_SCOPES`, space-separated, default `openid profile`; `openid` is always asked for. */
  readonly scopes: string;
  /**
   * Which token of the answer the console presents: `id_token` (default) or `access_token`, env
   * `ORMUZ_CONSOLE_OIDC_TOKEN`. Its `aud` must be `ORMUZ_AUTH_AUDIENCE` (an id token's is the client id).
   */
  readonly token: 'id_token' | 'access_token';
}

/** How webhooks are sent and retried. Tests shrink the delays; nothing else should need to. */
export interface WebhookSettings {
  /** How often the deliverer looks for due deliveries when nothing woke it, in ms. Env `WEBHOOK_POLL_MS`, default 1000. */
  readonly pollMs: number;
  /** How long one POST may take before it counts as unanswered, in ms. Env `WEBHOOK_TIMEOUT_MS`, default 10000. */
  readonly timeoutMs: number;
  /** Attempts per delivery, the first included. Env `WEBHOOK_MAX_ATTEMPTS`, default 8. */
  readonly maxAttempts: number;
  /** Delay before the second attempt, doubled for each later one, in ms. Env `WEBHOOK_BACKOFF_MS`, default 5000. */
  readonly baseDelayMs: number;
  /** Longest delay between attempts (before jitter), in ms. Env `WEBHOOK_BACKOFF_MAX_MS`, default 600000. */
  readonly maxDelayMs: number;
  /**
   * Whether endpoints may be on loopback, private, link-local, unique-local or unspecified addresses. Off in
   * production: a webhook URL would otherwise let a tenant's operator make the platform POST into its own network.
   * Env `ORMUZ_WEBHOOKS_ALLOW_PRIVATE=true` (the demo, the local docker-compose and tests that deliver to 127.0.0.1).
   */
  readonly allowPrivate: boolean;
  /**
   * The AES-256-GCM key that encrypts signing secrets at rest, or undefined to store new ones as issued. Env
   * `ORMUZ_WEBHOOKS_SECRET_KEY`: 32 bytes, base64.
   */
  readonly secretKey: Buffer | undefined;
}

export function loadApprovalsConfig(env: Env): ApprovalsConfig {
  const base = loadBaseConfig(env);
  return Object.freeze({
    ...base,
    consoleOidc: consoleOidc(env, base),
    httpPort: intFrom(env, 'APPROVALS_PORT', 8081, 0, 65535),
    httpHost: env.APPROVALS_HOST || '127.0.0.1',
    sweepIntervalMs: intFrom(env, 'APPROVAL_SWEEP_MS', 1000, 50, 3_600_000),
    streamRecheckMs: intFrom(env, 'STREAM_CREDENTIAL_RECHECK_MS', 30_000, 50, 3_600_000),
    webhooks: Object.freeze({
      pollMs: intFrom(env, 'WEBHOOK_POLL_MS', 1000, 10, 60_000),
      timeoutMs: intFrom(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      maxAttempts: intFrom(env, 'WEBHOOK_MAX_ATTEMPTS', 8, 1, 50),
      baseDelayMs: intFrom(env, 'WEBHOOK_BACKOFF_MS', 5000, 1, 3_600_000),
      maxDelayMs: intFrom(env, 'WEBHOOK_BACKOFF_MAX_MS', 600_000, 1, 86_400_000),
      allowPrivate: flagFrom(env, 'ORMUZ_WEBHOOKS_ALLOW_PRIVATE'),
      secretKey: keyFrom(env, 'ORMUZ_WEBHOOKS_SECRET_KEY'),
    }),
  });
}

/** `true` or `false` (unset: false); anything else is a mistake worth stopping for. */
function flagFrom(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(`${name}=${raw} is neither true nor false.`);
}

/** A 32-byte key given in base64, or undefined when unset. */
function keyFrom(env: Env, name: string): Buffer | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32 || key.toString('base64') !== raw.replace(/\s/g, '')) {
    throw new ConfigError(`${name} must be 32 bytes in base64 (\`openssl rand -base64 32\`); it is not.`);
  }
  return key;
}

function consoleOidc(env: Env, base: BaseConfig): ConsoleOidcSettings | undefined {
  const clientId = env.ORMUZ_CONSOLE_OIDC_CLIENT_ID;
  if (!clientId) return undefined;
  if (base.auth.devIssuerDir !== undefined) {
    throw new ConfigError(
      'ORMUZ_CONSOLE_OIDC_CLIENT_ID is set without ORMUZ_AUTH_ISSUER: the console signs in with that provider.',
    );
  }
  const token = env.ORMUZ_CONSOLE_OIDC_TOKEN || 'id_token';
  if (token !== 'id_token' && token !== 'access_token') {
    throw new ConfigError('ORMUZ_CONSOLE_OIDC_TOKEN must be id_token or access_token.');
  }
  const scopes = (env.ORMUZ_CONSOLE_OIDC_SCOPES || 'openid profile').split(/\s+/).filter(Boolean);
  return Object.freeze({
    issuer: base.auth.issuer,
    clientId,
    scopes: [...new Set(['openid', ...scopes])].join(' '),
    token,
  });
}

export const APPROVALS_CONFIG = Symbol('approvals.config');

/**
 * Streams approvals declares at start: `calls`, whose staged calls fill the inbox, and every other context's, which the
 * HTTP API's event stream reads. Declaring them is idempotent, so the services can start in any order.
 */
export const APPROVALS_STREAMS: readonly ContextName[] = Object.keys(CONTEXTS) as ContextName[];
