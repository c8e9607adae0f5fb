/**
 * Turns an HTTP request into the request of the route's command (or of the event stream), as its table row says:
 * path parameters fill the fields of their names, the query string the fields the row lists, the JSON body the rest.
 * What can be judged from the URL and the body's shape alone is refused here, with a sentence naming the fix; whether
 * the request is a valid command request is for the owning service to say (`schema_violation`), after it has checked
 * who is asking.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { asOfFromQuery, assertIdentifier, isAsOfSchema, OrmuzError, SchemaViolationError } from '@ormuz/contracts';
import type { ApiRoute } from './api-routes.js';

/** What the edge reads of an Express request. */
export interface EdgeRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly query: Readonly<Record<string, unknown>>;
  /** Set by Express's JSON parser; undefined when the request had no JSON body. */
  readonly body?: unknown;
}

/** A body that is not JSON (a form, text): the API reads JSON only. */
export class UnsupportedMediaTypeError extends OrmuzError {
  readonly code = 'unsupported_media_type';
}

/** The names of a path template's parameters, in order (`{tenant}`, `{call_id}` → `tenant`, `call_id`). */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
}

/** The Express form of a path template: `/v1/tenants/{tenant}` → `/v1/tenants/:tenant`. */
export function expressPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}

/**
 * The request `route` makes of `http`. Throws InvalidIdentifierError for a path parameter that could not be a subject
 * token (`a.b`, `*`, `>`), SchemaViolationError for a query parameter the route does not take or a body that is not a
 * JSON object or repeats a path or query field, UnsupportedMediaTypeError for a body that is not JSON.
 */
export function routeRequest(route: ApiRoute, http: EdgeRequest): Record<string, unknown> {
  const fromUrl: Record<string, unknown> = {};
  for (const name of pathParameters(route.path)) fromUrl[name] = assertIdentifier(name, http.params[name]);
  const properties = (route.request as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  for (const [name, raw] of Object.entries(http.query)) {
    if (!route.query.includes(name)) {
      const takes = route.query.length > 0 ? `it takes ${route.query.join(', ')}` : 'it takes none';
      throw new SchemaViolationError(route.requestSchema, [
        `the query parameter '${name}' is not one this route takes (${takes})`,
      ]);
    }
    fromUrl[name] = fromQuery(raw, properties[name]);
  }
  if (route.kind !== 'command' || !route.body) return fromUrl;
  const body = jsonBody(http);
  if (body === undefined) return fromUrl;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new SchemaViolationError(route.requestSchema, ['the request body must be a JSON object']);
  }
  for (const name of Object.keys(body)) {
    if (Object.hasOwn(fromUrl, name) || route.query.includes(name)) {
      const where = route.query.includes(name) ? 'the query string' : 'the path';
      throw new SchemaViolationError(route.requestSchema, [`'${name}' is given by ${where}; leave it out of the body`]);
    }
  }
  return { ...body, ...fromUrl };
}

/**
 * A query value as the field's schema reads it: `true`/`false` for a boolean, digits for an integer, a point in the
 * log for `as_of` ({@link asOfFromQuery}). Anything else is passed on as it came, for the service to refuse with the
 * field's name.
 */
function fromQuery(raw: unknown, schema: { type?: unknown } | undefined): unknown {
  if (typeof raw !== 'string') return raw;
  if (isAsOfSchema(schema)) return asOfFromQuery(raw);
  const type = schema?.type;
  if (type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  if ((type === 'integer' || type === 'number') && /^-?[0-9]{1,15}$/.test(raw)) return Number(raw);
  return raw;
}

/** The parsed JSON body, or undefined for none. A body Express did not parse as JSON is refused rather than ignored. */
function jsonBody(http: EdgeRequest): unknown {
  const length = http.headers['content-length'];
  const sent = http.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  const type = (http.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const json = type === 'application/json' || type.endsWith('+json');
  if (sent && !json) {
    throw new UnsupportedMediaTypeError(
      `The request body is ${type || 'of no stated type'}; send JSON with Content-Type: application/json.`,
    );
  }
  return http.body;
}
