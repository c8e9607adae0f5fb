/**
 * The console's sign-in through an OpenID-Connect provider, in a real browser (Debian's Chromium, driven by
 * playwright-core), against approvals in-process trusting that provider (ORMUZ_AUTH_ISSUER) and a provider test double
 * on a local port: discovery, an /authorize that signs the user in at once and redirects back with a code, a /token
 * that checks the client, the redirect URI and the PKCE verifier as a real provider does and issues an ES256 id token,
 * and the JWKS the service verifies it with.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { streamName } from '@ormuz/event-log';
import { startService, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, launchBrowser, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import { APPROVALS_SCHEMA, approvalsMigrations, ApprovalsModule, loadApprovalsConfig } from '../src/index.js';

const CLIENT_ID = 'ormuz-console';

interface Authorization {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly challenge: string;
  readonly nonce: string;
}

/** A provider as the console meets one: only what the flow needs, checked as strictly as a real one checks it. */
class OidcProviderDouble {
  issuer = '';
  /** The one redirect URI registered for the console's client. */
  redirectUri = '';
  /** Answer /authorize with this state instead of the page's (an answer to another sign-in). */
  forgeState = false;
  readonly tokenRequests: Record<string, string>[] = [];
  private readonly codes = new Map<string, Authorization>();
  private server!: Server;
  private key!: CryptoKey;
  private jwk!: JWK;

  async start(): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    this.key = privateKey;
    this.jwk = { ...(await exportJWK(publicKey)), kid: 'test-1', alg: 'ES256', use: 'sig' };
    this.server = createServer((req, res) => {
      this.handle(req).then(
        ({ status, headers, body }) => {
          res.writeHead(status, headers);
          res.end(body);
        },
        (err: Error) => {
          res.writeHead(500);
          res.end(err.message);
        },
      );
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(
    req: IncomingMessage,
  ): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    const url = new URL(req.url!, this.issuer);
    const json = (status: number, body: unknown, extra: Record<string, string> = {}) => ({
      status,
      headers: { 'content-type': 'application/json', ...extra },
      body: JSON.stringify(body),
    });
    switch (url.pathname) {
      case '/.well-known/openid-configuration':
        return json(200, {
          issuer: this.issuer,
          authorization_endpoint: `${this.issuer}/authorize`,
          token_endpoint: `${this.issuer}/token`,
          jwks_uri: `${this.issuer}/jwks`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
        });
      case '/jwks':
        return json(200, { keys: [this.jwk] });
      case '/authorize':
        return this.authorize(url.searchParams);
      case '/token': {
        // The page calls it from its own origin: a browser needs CORS to read the answer.
        const cors = { 'access-control-allow-origin': req.headers.origin ?? '*' };
        const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
        this.tokenRequests.push(form);
        const problem = this.tokenProblem(form);
        if (problem) return json(400, { error: 'invalid_grant', error_description: problem }, cors);
        const grant = this.codes.get(form.code!)!;
        this.codes.delete(form.code!);
        const idToken = await new SignJWT({ nonce: grant.nonce, ormuz_tenant: 'acme', ormuz_roles: ['owner'] })
          .setProtectedHeader({ alg: 'ES256', kid: 'test-1' })
          .setIssuer(this.issuer)
          .setAudience(CLIENT_ID)
          .setSubject('olivia@acme')
          .setIssuedAt()
          .setExpirationTime('10m')
          .sign(this.key);
        return json(200, { token_type: 'Bearer', id_token: idToken, access_token: 'opaque', expires_in: 600 }, cors);
      }
      default:
        return json(404, { error: 'not_found' });
    }
  }

  /** The user is already signed in here: straight back to the client with a code, as after a login form. */
  private authorize(q: URLSearchParams) {
    const refuse = (why: string) => ({ status: 400, headers: { 'content-type': 'text/plain' }, body: why });
    if (q.get('client_id') !== CLIENT_ID) return refuse('unknown client');
    if (q.get('redirect_uri') !== this.redirectUri) return refuse('redirect_uri is not registered');
    if (q.get('response_type') !== 'code') return refuse('response_type must be code');
    if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return refuse('PKCE S256 is required');
    if (!q.get('scope')?.split(' ').includes('openid')) return refuse('scope must include openid');
    const code = randomBytes(16).toString('hex');
    this.codes.set(code, {
      clientId: CLIENT_ID,
      redirectUri: q.get('redirect_uri')!,
      challenge: q.get('code_challenge')!,
      nonce: q.get('nonce') ?? '',
    });
    const back = new URL(this.redirectUri);
    back.search = new URLSearchParams({ code, state: this.forgeState ? 'forged' : (q.get('state') ?? '') }).toString();
    return { status: 302, headers: { location: back.toString() }, body: '' };
  }

  private tokenProblem(form: Record<string, string>): string | undefined {
    if (form.grant_type !== 'authorization_code') return 'grant_type must be authorization_code';
    const grant = form.code ? this.codes.get(form.code) : undefined;
    if (!grant) return 'unknown or used code';
    if (form.client_id !== grant.clientId) return 'the code was issued to another client';
    if (form.redirect_uri !== grant.redirectUri) return 'redirect_uri differs from the authorization request';
    const challenge = createHash('sha256')
      .update(form.code_verifier ?? '')
      .digest('base64url');
    if (challenge !== grant.challenge) return 'code_verifier does not match the code challenge';
    return undefined;
  }
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

describe('the console signing in through an OpenID-Connect provider', () => {
  const namespace = randomNamespace('oidc');
  const provider = new OidcProviderDouble();
  let db: TestDatabase;
  let svc: RunningService;
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    await provider.start();
    db = await createTestDatabase();
    const config = loadApprovalsConfig({
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: db.url,
      ORMUZ_NAMESPACE: namespace,
      LOG_LEVEL: 'silent',
      APPROVALS_PORT: '0',
      ORMUZ_AUTH_ISSUER: provider.issuer,
      ORMUZ_AUTH_AUDIENCE: CLIENT_ID,
      ORMUZ_AUTH_JWKS_URL: `${provider.issuer}/jwks`,
      ORMUZ_CONSOLE_OIDC_CLIENT_ID: CLIENT_ID,
    });
    svc = await startService({
      service: 'approvals',
      config,
      streams: ['calls'],
      schema: APPROVALS_SCHEMA,
      migrations: approvalsMigrations,
      module: (infra) => ApprovalsModule.with(infra, config),
      httpPort: 0,
    });
    url = svc.httpUrl!;
    provider.redirectUri = `${url}/console`;
    browser = await launchBrowser();
  });
  beforeEach(async () => {
    provider.forgeState = false;
    provider.tokenRequests.length = 0;
    context = await browser.newContext();
    page = await context.newPage();
  });
  afterEach(() => context.close());
  afterAll(async () => {
    await browser?.close();
    await svc?.infra.jsm.streams.delete(streamName(namespace, 'calls')).catch(() => undefined);
    await svc?.close();
    await db?.drop();
    await provider.stop();
  });

  it("serves the provider's endpoints to the page, and lets the page reach its token endpoint", async () => {
    const config = (await (await fetch(`${url}/console/oidc/config`)).json()) as Record<string, unknown>;
    expect(config).toEqual({
      enabled: true,
      issuer: provider.issuer,
      authorization_endpoint: `${provider.issuer}/authorize`,
      token_endpoint: `${provider.issuer}/token`,
      client_id: CLIENT_ID,
      scope: 'openid profile',
      token: 'id_token',
    });
    const csp = (await fetch(`${url}/console`)).headers.get('content-security-policy');
    expect(csp).toContain(`connect-src 'self' ${provider.issuer}`);
  });

  it('signs in through the redirect (code, PKCE, state, nonce) and shows the inbox; the pasted-token form stays', async () => {
    await page.goto(`${url}/console`);
    await page.getByLabel('Bearer token').waitFor();
    await page.getByRole('button', { name: `Sign in with ${provider.issuer}` }).click();
    await page.locator('#who', { hasText: 'olivia@acme · acme' }).waitFor();
    await page.locator('#live[data-state="live"]').waitFor();
    await page.locator('#inbox-view').waitFor();
    expect(provider.tokenRequests).toHaveLength(1);
    expect(provider.tokenRequests[0]).toMatchObject({
      grant_type: 'authorization_code',
      client_id: CLIENT_ID,
      redirect_uri: `${url}/console`,
    });
    // The code is gone from the address, and the token is kept for this tab like a pasted one.
    expect(page.url()).toBe(`${url}/console`);
    expect(await page.evaluate('sessionStorage.getItem("ormuz.console.token")')).toMatch(/^ey/);
    expect(await page.evaluate('sessionStorage.getItem("ormuz.console.oidc")')).toBeNull();
    expect(await context.cookies()).toEqual([]);
  });

  it('refuses an answer with a state this tab did not send, and never exchanges its code', async () => {
    provider.forgeState = true;
    await page.goto(`${url}/console`);
    await page.getByRole('button', { name: `Sign in with ${provider.issuer}` }).click();
    await page.locator('#sign-in-error', { hasText: 'its state does not match' }).waitFor();
    expect(await page.getByLabel('Bearer token').isVisible()).toBe(true);
    expect(provider.tokenRequests).toEqual([]);
    expect(await page.evaluate('sessionStorage.getItem("ormuz.console.token")')).toBeNull();
  });
});
