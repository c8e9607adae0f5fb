/**
 * Checks on an MCP request before anything reads its credential or body. Pure.
 *
 * Against DNS rebinding, the `Host` must name a host this gateway answers to (by host name, any port), and a browser's
 * `Origin`, when there is one, must be allowed or be of such a host: a page of another site that got the name to
 * resolve to this gateway is then refused. (The SDK's transport options for this are deprecated in favour of checks in front of it, which is
 * what these are; the host check is the SDK's `hostHeaderValidation` rule, port-agnostic.)
 */

/** The reason to refuse a request with these headers (403), or `undefined` to serve it. */
export function originProblem(
  host: string | undefined,
  origin: string | undefined,
  allowedHosts: readonly string[],
  allowedOrigins: readonly string[],
): string | undefined {
  if (!host) return 'The request has no Host header.';
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return `The Host header ${JSON.stringify(host)} is not a host name.`;
  }
  if (!allowedHosts.includes(hostname)) {
    return `This MCP endpoint does not answer to host ${hostname} (MCP_ALLOWED_HOSTS names those it does).`;
  }
  if (origin !== undefined && !allowedOrigins.includes(origin) && !allowedHosts.includes(originHost(origin))) {
    return `Requests from origin ${origin} are not allowed (MCP_ALLOWED_ORIGINS names those that are).`;
  }
  return undefined;
}

/** The host name of an `Origin` (a page served by a host this gateway answers to is its own), or '' for none. */
function originHost(origin: string): string {
  try {
    return new URL(origin).hostname;
  } catch {
    return '';
  }
}

/** The header a session names the device it acts on with. */
export const DEVICE_HEADER = 'ormuz-device';

const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/**
 * The device an `Ormuz-Device` header names for a session of `tenant`: `<device>` or `<tenant>/<device>`. A device
 * is known within its tenant only, so one named with another tenant is refused (`forbidden`), never looked up there.
 */
export function deviceOf(
  header: string | undefined,
  tenant: string,
): { readonly deviceId: string | null } | { readonly problem: string; readonly forbidden: boolean } {
  if (header === undefined || header === '') return { deviceId: null };
  const slash = header.indexOf('/');
  const named = slash < 0 ? undefined : header.slice(0, slash);
  const deviceId = slash < 0 ? header : header.slice(slash + 1);
  if (!IDENTIFIER.test(deviceId) || (named !== undefined && !IDENTIFIER.test(named))) {
    return {
      problem: `Ormuz-Device must be <device id> or <tenant>/<device id> (letters, digits, '_', '-'); got ${JSON.stringify(header.slice(0, 200))}.`,
      forbidden: false,
    };
  }
  if (named !== undefined && named !== tenant) {
    return {
      problem: `Device ${deviceId} of tenant ${named} is not this key's to act on: the API key acts for tenant ${tenant}.`,
      forbidden: true,
    };
  }
  return { deviceId };
}
