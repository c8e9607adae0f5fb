/**
 * The OpenAPI 3.1 document of the API, made from the route table and the contracts' TypeBox declarations, which are
 * JSON Schema 2020-12, OpenAPI 3.1's own dialect: they go in as they are. A path parameter or query parameter is
 * described by the schema of the request field it fills, a body by the request's schema less those fields, a 200
 * by the command's reply schema, errors by the one error body.
 */
import { ApiErrorV1, AS_OF_QUERY_SCHEMA, isAsOfSchema } from '@ormuz/contracts';
import { MAX_RPC_BYTES } from '@ormuz/service-kit';
import type { ApiRoute } from './api-routes.js';
import { pathParameters } from './edge-request.js';

type Json = Record<string, unknown>;

/** The API's version; the major one is the path prefix (`/v1`). */
export const API_VERSION = '1.0.0';

/** Error statuses every route may answer, with what each means. */
const ERRORS: Readonly<Record<string, string>> = {
  400: 'The request is malformed: not JSON, an identifier that cannot be one, or a request its schema refuses.',
  401: 'No credential, or one that does not verify.',
  403: "The credential's tenant or roles do not allow this.",
  404: 'No such thing in this tenant (`*_not_found`), or no such route.',
  409: 'It conflicts with what is recorded (the code says what).',
  413: `The body is larger than ${MAX_RPC_BYTES / 1024} KiB.`,
  503: 'The service that owns this did not answer; the message says whether anything may have happened.',
};
/** Only routes that take a body can be sent one of another type. */
const BODY_ERRORS: Readonly<Record<string, string>> = { 415: 'The body is not JSON.' };

/** The document. `routes` is the API's table; every route it lists is described, nothing else is. */
export function openApiDocument(routes: readonly ApiRoute[]): Json {
  const schemas: Json = { ApiError: plain(ApiErrorV1) };
  const responses: Json = {};
  for (const [status, description] of Object.entries({ ...ERRORS, ...BODY_ERRORS })) {
    responses[`Error${status}`] = {
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiError' } } },
    };
  }
  const paths: Record<string, Json> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operation(route, schemas);
  paths['/openapi.json'] = {
    get: {
      operationId: 'openApiDocument',
      summary: 'This document',
      tags: ['api'],
      security: [],
      responses: {
        200: {
          description: 'The OpenAPI 3.1 document.',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Ormuz API',
      version: API_VERSION,
      description:
        'Every tool call an agent makes, governed: submit calls, read their status and audit record, manage grants, ' +
        "devices and conversations, decide staged calls, and follow a tenant's events. Each route runs the owning " +
        "service's command with the caller's own credential; errors are `{ error: { code, message } }`.",
    },
    tags: [...new Set(routes.map((r) => r.tag)), 'api'].map((name) => ({ name })),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            "`Authorization: Bearer <token>`: a JWT from the platform's identity provider (on a development machine, " +
            '`ormuz auth token`), or an API key.',
        },
      },
      schemas,
      responses,
    },
  };
}

function operation(route: ApiRoute, schemas: Json): Json {
  const request = plain(route.request) as { properties?: Record<string, Json>; required?: string[] };
  const properties = request.properties ?? {};
  const required = new Set(request.required ?? []);
  const inPath = pathParameters(route.path);
  const parameters: Json[] = [
    ...inPath.map((name) => ({ name, in: 'path', required: true, schema: properties[name] })),
    ...route.query.map((name) => ({
      name,
      in: 'query',
      required: required.has(name),
      // What the query string carries: `as_of` is written as text there (edge-request.ts reads it).
      schema: isAsOfSchema(properties[name]) ? AS_OF_QUERY_SCHEMA : properties[name],
    })),
  ];
  const name = route.operationId[0]!.toUpperCase() + route.operationId.slice(1);
  const errors = (statuses: Record<string, string>) =>
    Object.fromEntries(Object.keys(statuses).map((s) => [s, { $ref: `#/components/responses/Error${s}` }]));
  const op: Json = { operationId: route.operationId, summary: route.summary, tags: [route.tag], parameters };
  if (route.kind === 'events') {
    schemas[`${name}Message`] = plain(route.message);
    parameters.push({
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description: 'Resume after this event: the `id` of the last event received (browsers send it on reconnecting).',
      schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
    });
    op.description =
      `Server-sent events. Each event is one message of the context's stream: \`id:\` is its stream sequence, ` +
      `\`data:\` one line of JSON, a \`${name}Message\` (components.schemas). Without \`from\` or ` +
      '`Last-Event-ID`, the stream starts with the next event appended. Readers: analyst, operator, admin.';
    op.responses = {
      200: {
        description: 'The event stream, until the client disconnects.',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...errors(ERRORS),
    };
    return op;
  }
  schemas[`${name}Reply`] = plain(route.reply);
  op.description = `Runs \`${route.command}\` with the caller's credential.`;
  if (route.body) {
    const fromUrl = new Set([...inPath, ...route.query]);
    const body = {
      ...request,
      properties: Object.fromEntries(Object.entries(properties).filter(([key]) => !fromUrl.has(key))),
      required: [...required].filter((key) => !fromUrl.has(key)),
    };
    schemas[`${name}Body`] = body;
    op.requestBody = {
      required: body.required.length > 0,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}Body` } } },
    };
  }
  op.responses = {
    200: {
      description: "The command's answer.",
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}Reply` } } },
    },
    ...errors(route.body ? { ...ERRORS, ...BODY_ERRORS } : ERRORS),
  };
  return op;
}

/** A TypeBox declaration as the plain JSON Schema it is (TypeBox's own markers are not enumerable). */
function plain(schema: object): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}
