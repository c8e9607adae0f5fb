import { ACCESS } from '@ormuz/auth';
import { IDENTIFIER_PATTERN, InvalidIdentifierError, SchemaViolationError } from '@ormuz/contracts';
import { API_ROUTES, type CommandRoute } from './api-routes.js';
import {
  expressPath,
  pathParameters,
  routeRequest,
  UnsupportedMediaTypeError,
  type EdgeRequest,
} from './edge-request.js';

type Properties = Record<string, { type?: string; pattern?: string }>;
const schemaOf = (route: (typeof API_ROUTES)[number]) =>
  route.request as { properties: Properties; required?: string[] };
const commandRoute = (operationId: string) => API_ROUTES.find((r) => r.operationId === operationId) as CommandRoute;

describe('the route table', () => {
  it('names each route once, by method and path and by operation id', () => {
    const keys = API_ROUTES.map((r) => `${r.method} ${expressPath(r.path)}`);
    expect(new Set(keys).size).toBe(keys.length);
    const ids = API_ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(API_ROUTES.every((r) => r.path.startsWith('/v1/tenants/{tenant}'))).toBe(true);
  });

  it('fills each path parameter into an identifier field of the request, and each query name into a field', () => {
    for (const route of API_ROUTES) {
      const { properties } = schemaOf(route);
      for (const name of pathParameters(route.path)) {
        expect({ route: route.operationId, name, pattern: properties[name]?.pattern }).toEqual({
          route: route.operationId,
          name,
          pattern: IDENTIFIER_PATTERN.source,
        });
      }
      for (const name of route.query) expect(Object.keys(properties)).toContain(name);
    }
  });

  it('gives every required field of a command without a body from its path or query', () => {
    for (const route of API_ROUTES) {
      if (route.kind === 'command' && route.body) continue;
      const given = [...pathParameters(route.path), ...route.query];
      for (const field of schemaOf(route).required ?? [])
        expect({ route: route.operationId, field, given: given.includes(field) }).toEqual({
          route: route.operationId,
          field,
          given: true,
        });
    }
  });

  it('reads the stream against an access row that exists', () => {
    for (const route of API_ROUTES) {
      const row = route.kind === 'events' ? route.access : route.command;
      expect(ACCESS[row]).toBeDefined();
    }
  });
});

describe('routeRequest', () => {
  const http = (over: Partial<EdgeRequest>): EdgeRequest => ({
    method: 'GET',
    headers: {},
    params: {},
    query: {},
    ...over,
  });
  const jsonHeaders = { 'content-type': 'application/json', 'content-length': '20' };

  it('merges path, query (read as the field types them) and body', () => {
    expect(
      routeRequest(
        commandRoute('policyStatus'),
        http({ params: { tenant: 'acme', call_id: 'call_1' }, query: { timeline: 'true' } }),
      ),
    ).toEqual({ tenant: 'acme', call_id: 'call_1', timeline: true });
    expect(
      routeRequest(
        commandRoute('policyToolsSearch'),
        http({ params: { tenant: 'acme', agent_id: 'a1' }, query: { query: 'send text', limit: '5' } }),
      ),
    ).toEqual({ tenant: 'acme', agent_id: 'a1', query: 'send text', limit: 5 });
    expect(
      routeRequest(
        commandRoute('policySeal'),
        http({
          headers: jsonHeaders,
          params: { tenant: 'acme', call_id: 'c1' },
          body: { sealed_by: 'me', reason: 'r' },
        }),
      ),
    ).toEqual({ tenant: 'acme', call_id: 'c1', sealed_by: 'me', reason: 'r' });
  });

  it('passes a query value the field cannot read on, for the service to refuse by name', () => {
    const request = routeRequest(
      commandRoute('policyStatus'),
      http({ params: { tenant: 'acme', call_id: 'c1' }, query: { timeline: 'yes' } }),
    );
    expect(request.timeline).toBe('yes');
  });

  it.each([
    ['1234', { seq: 1234 }],
    ['2026-05-01T10:00:00Z', { time: '2026-05-01T10:00:00Z' }],
    // Not a time: passed on as one, for the service's schema to refuse by the field's name.
    ['yesterday', { time: 'yesterday' }],
  ])('reads as_of=%j as a point in the log', (value, asOf) => {
    for (const route of [commandRoute('policyStatus'), commandRoute('modelLoopGet')]) {
      const params = { tenant: 'acme', call_id: 'c1', conversation_id: 'conv-1' };
      const request = routeRequest(route, http({ params, query: { as_of: value } }));
      expect(request.as_of).toEqual(asOf);
    }
  });

  it.each(['a.b', '*', '>', 'a b', ''])('refuses the path parameter %j as an identifier', (id) => {
    const run = () => routeRequest(commandRoute('policyStatus'), http({ params: { tenant: 'acme', call_id: id } }));
    expect(run).toThrow(InvalidIdentifierError);
    expect(run).toThrow(/call_id/);
  });

  it('refuses a query parameter the route does not take, naming those it does', () => {
    const run = () =>
      routeRequest(
        commandRoute('policyStatus'),
        http({ params: { tenant: 'acme', call_id: 'c1' }, query: { tenant: 'globex' } }),
      );
    expect(run).toThrow(SchemaViolationError);
    expect(run).toThrow(/'tenant' is not one this route takes \(it takes timeline, as_of\)/);
  });

  it('refuses a body that is not an object, or repeats a path field', () => {
    const seal = commandRoute('policySeal');
    const params = { tenant: 'acme', call_id: 'c1' };
    expect(() => routeRequest(seal, http({ headers: jsonHeaders, params, body: [1] }))).toThrow(
      /must be a JSON object/,
    );
    expect(() => routeRequest(seal, http({ headers: jsonHeaders, params, body: { tenant: 'globex' } }))).toThrow(
      /'tenant' is given by the path; leave it out of the body/,
    );
  });

  it('refuses a body that is not JSON rather than ignoring it', () => {
    const run = () =>
      routeRequest(
        commandRoute('policySeal'),
        http({
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '9' },
          params: { tenant: 'acme', call_id: 'c1' },
          body: { reason: 'x' },
        }),
      );
    expect(run).toThrow(UnsupportedMediaTypeError);
    expect(run).toThrow(/Content-Type: application\/json/);
  });

  it('takes an absent body as no fields', () => {
    expect(
      routeRequest(commandRoute('approvalsApprove'), http({ params: { tenant: 'acme', approval_id: 'apr_1' } })),
    ).toEqual({ tenant: 'acme', approval_id: 'apr_1' });
  });
});
