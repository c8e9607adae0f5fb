/* global document, sessionStorage, fetch, location, URLSearchParams, crypto, TextEncoder, atob, btoa, history */
// Sign-in through the OpenID-Connect provider the services trust, where the service offers it
// (`GET /console/oidc/config`): the Authorization Code flow with PKCE (S256), the page being a public client (no
// secret). The page sends the browser to the provider with a fresh state, nonce and code challenge kept in this tab's
// session storage; the provider sends it back to /console with a code; the page checks the state, exchanges the code
// at the token endpoint with the verifier, checks the id token's nonce, and keeps the token like a pasted one. The
// service verifies it like any other (JwtVerifier): its audience must be ORMUZ_AUTH_AUDIENCE.

const PENDING_KEY = 'ormuz.console.oidc';

/** The provider's settings for this page, or undefined where only pasted tokens are offered. */
async function oidcConfig() {
  const res = await fetch('/console/oidc/config', { cache: 'no-store' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error?.message ?? `The service answered ${res.status}.`);
  return body.enabled ? body : undefined;
}

const base64url = (bytes) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const redirectUri = () => `${location.origin}/console`;

async function challengeOf(verifier) {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

/** Sends the browser to the provider's sign-in, remembering what its answer must match. */
async function redirectToProvider(config) {
  const pending = { state: random(), nonce: random(), verifier: random() };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(config.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.client_id,
    redirect_uri: redirectUri(),
    scope: config.scope,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await challengeOf(pending.verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

/**
 * Adds "Sign in with <issuer>" to the sign-in form where the service offers it. `onError(message)` shows a failure.
 */
export async function offerProviderSignIn(form, onError) {
  let config;
  try {
    config = await oidcConfig();
  } catch (err) {
    onError(`Sign-in through your identity provider is unavailable: ${err.message}`);
    return;
  }
  if (!config) return;
  const button = document.createElement('button');
  button.type = 'button';
  button.id = 'oidc-sign-in';
  button.className = 'primary';
  button.textContent = `Sign in with ${config.issuer}`;
  button.addEventListener('click', () => redirectToProvider(config).catch((err) => onError(err.message)));
  const paragraph = document.createElement('p');
  paragraph.append(button);
  form.prepend(paragraph);
}

function payloadOf(jwt) {
  const part = jwt.split('.')[1] ?? '';
  return JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/')));
}

/**
 * When the provider has just sent the browser back here (`?code=…&state=…`, or `?error=…`), finishes the sign-in and
 * returns the token to keep; undefined on an ordinary load. Throws, saying why, for an answer this tab did not ask
 * for (wrong or missing state), a refusal by the provider, a failed exchange, or an id token with another nonce.
 * The query is removed from the address either way, so a reload does not replay it.
 */
export async function completeProviderSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has('code') && !params.has('error')) return undefined;
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null');
  sessionStorage.removeItem(PENDING_KEY);
  if (!pending || params.get('state') !== pending.state) {
    throw new Error('The identity provider answered a sign-in this tab did not start (its state does not match).');
  }
  if (params.has('error')) {
    throw new Error(`The identity provider refused: ${params.get('error_description') || params.get('error')}.`);
  }
  const config = await oidcConfig();
  if (!config) throw new Error('This console no longer signs in through an identity provider.');
  const res = await fetch(config.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.get('code'),
      redirect_uri: redirectUri(),
      client_id: config.client_id,
      code_verifier: pending.verifier,
    }).toString(),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) {
    throw new Error(
      `The identity provider did not exchange the code: ${answer.error_description ?? answer.error ?? res.status}.`,
    );
  }
  // The id token's nonce ties it to this tab's request, whichever token is kept.
  if (answer.id_token && payloadOf(answer.id_token).nonce !== pending.nonce) {
    throw new Error('The identity provider answered with an id token for another sign-in (its nonce does not match).');
  }
  const token = answer[config.token];
  if (typeof token !== 'string' || !token) throw new Error(`The identity provider's answer has no ${config.token}.`);
  return token;
}
