/**
 * Credentials for tests, signed by the development issuer the services trust by default (the same key directory,
 * `ORMUZ_DEV_ISSUER_DIR` or the user's config directory). Tests call commands as the person they mean: an admin of
 * the tenant their request names unless they are testing access itself.
 */
import { devIssuerDir, DevIssuer, type DevTokenClaims, type Role } from '@ormuz/auth';
import { identifierProblem } from '@ormuz/contracts';

let issuer: Promise<DevIssuer> | undefined;

function devIssuer(): Promise<DevIssuer> {
  issuer ??= DevIssuer.open(devIssuerDir(process.env));
  return issuer;
}

/** A token for `claims`, signed by the development issuer. */
export async function testToken(claims: DevTokenClaims): Promise<string> {
  return (await devIssuer()).sign(claims);
}

/** A bearer credential for a person of `tenant` with `roles` (default: admin); `*` is a platform administrator. */
export async function bearerFor(
  tenant: string,
  roles: readonly Role[] = ['admin'],
  subject = `${roles.join('+')}@${tenant === '*' ? 'platform' : tenant}`,
): Promise<{ readonly bearer: string }> {
  return { bearer: await testToken({ tenant, roles, subject }) };
}

/**
 * An admin credential for the tenant a request body names; a platform administrator when it names none. A body whose
 * tenant is not an identifier (a test of the schema's refusal) gets an admin of tenant `acme`: the request is refused
 * by its schema, not by who sent it.
 */
export function adminFor(body: unknown): Promise<{ readonly bearer: string }> {
  const tenant = (body as { tenant?: unknown } | null)?.tenant;
  if (tenant === undefined) return bearerFor('*');
  return bearerFor(typeof tenant === 'string' && !identifierProblem(tenant) ? tenant : 'acme');
}
