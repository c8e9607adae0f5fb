/**
 * The console's sign-in through the OpenID-Connect provider, server side: what the page needs to run the
 * Authorization Code flow with PKCE itself (the provider's endpoints from its discovery document, the client id, the
 * scopes, which token to keep), and the origin the page's Content-Security-Policy must let it reach (the token
 * endpoint, which the page calls with fetch). The page does the rest in `public/oidc.js`; the service never sees a
 * code or holds a session.
 */
import { Inject, Injectable } from '@nestjs/common';
import { OrmuzError } from '@ormuz/contracts';
import { APPROVALS_CONFIG, type ApprovalsConfig, type ConsoleOidcSettings } from '../config.js';

/** What `GET /console/oidc/config` answers when sign-in through the provider is offered. */
export interface ConsoleOidcConfig {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly client_id: string;
  readonly scope: string;
  readonly token: 'id_token' | 'access_token';
}

/** The provider's discovery document could not be read. */
export class OidcDiscoveryError extends OrmuzError {
  readonly code = 'service_unavailable';
}

const DISCOVERY_TIMEOUT_MS = 5000;

@Injectable()
export class ConsoleOidc {
  /** The discovery, read once; a failure is not kept, so the next page load asks again. */
  private discovered: Promise<ConsoleOidcConfig> | undefined;

  constructor(@Inject(APPROVALS_CONFIG) private readonly config: ApprovalsConfig) {}

  /** The page's settings; undefined when only pasted tokens are offered. Throws OidcDiscoveryError. */
  async pageConfig(): Promise<ConsoleOidcConfig | undefined> {
    const settings = this.config.consoleOidc;
    if (!settings) return undefined;
    this.discovered ??= discover(settings).catch((err: unknown) => {
      this.discovered = undefined;
      throw err;
    });
    return this.discovered;
  }

  /** Origins besides its own the page talks to: the token endpoint's, once discovered. */
  async connectSources(): Promise<string[]> {
    const config = await this.pageConfig().catch(() => undefined);
    return config ? [new URL(config.token_endpoint).origin] : [];
  }
}

async function discover(settings: ConsoleOidcSettings): Promise<ConsoleOidcConfig> {
  const url = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let doc: { issuer?: unknown; authorization_endpoint?: unknown; token_endpoint?: unknown };
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`it answered ${res.status}`);
    doc = (await res.json()) as typeof doc;
  } catch (err) {
    throw new OidcDiscoveryError(
      `The identity provider's discovery document ${url} could not be read: ${(err as Error).message}.`,
    );
  }
  const endpoint = (name: 'authorization_endpoint' | 'token_endpoint'): string => {
    const value = doc[name];
    if (typeof value !== 'string' || !/^https?:\/\//.test(value)) {
      throw new OidcDiscoveryError(`The discovery document ${url} has no ${name}.`);
    }
    return value;
  };
  // OpenID Connect Discovery 1.0 §4.3: the document's issuer must be the one it was fetched for.
  if (doc.issuer !== settings.issuer) {
    throw new OidcDiscoveryError(
      `The discovery document ${url} names issuer ${String(doc.issuer)}, not ${settings.issuer}.`,
    );
  }
  return Object.freeze({
    issuer: settings.issuer,
    authorization_endpoint: endpoint('authorization_endpoint'),
    token_endpoint: endpoint('token_endpoint'),
    client_id: settings.clientId,
    scope: settings.scopes,
    token: settings.token,
  });
}
