/**
 * The bearer credential of an HTTP request, as the console's routes need it besides the verified identity: to forward
 * it to the service that answers (each service checks access itself), and to end a live stream when the token does.
 * Never logged.
 */
import { decodeJwt } from 'jose';
import { bearerOf as credentialOf, UnauthenticatedError } from '@ormuz/auth';

/** The credential in `Authorization: Bearer <credential>`; throws UnauthenticatedError when there is none. */
export function bearerOf(header: string | string[] | undefined): string {
  const credential = credentialOf(Array.isArray(header) ? header[0] : header);
  if (credential === undefined) {
    throw new UnauthenticatedError(
      "This route needs a credential: `Authorization: Bearer <token>` (`ormuz auth token`, or your identity provider's).",
    );
  }
  return credential;
}

/**
 * When a JWT stops being valid (its `exp`), read from a token the authenticator has already verified; undefined for
 * an API key or a token without `exp`, which the stream then keeps until the page closes it.
 */
export function tokenExpiry(bearer: string): Date | undefined {
  let exp: unknown;
  try {
    // jose's reader of the payload (no signature check: the authenticator did that); it throws for anything that
    // is not a JWT, such as an API key.
    ({ exp } = decodeJwt(bearer));
  } catch {
    return undefined;
  }
  return typeof exp === 'number' && Number.isFinite(exp) ? new Date(exp * 1000) : undefined;
}
