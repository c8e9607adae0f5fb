/**
 * The served OpenAPI document: valid OpenAPI 3.1 (checked by a validator of the specification's own schemas), every
 * route of the table in it, and good enough to generate a typed client from (openapi-typescript) that talks to the
 * running API (openapi-fetch). The generated types are kept in test/generated/ and compiled with the tests; this spec
 * fails when they no longer match the served document (ORMUZ_UPDATE_API_CLIENT=1 rewrites them).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import createClient from 'openapi-fetch';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { API_ROUTES } from '../src/index.js';
import { ApiPlatform } from './api.fixture.js';
import type { paths } from './generated/ormuz-api.js';

const GENERATED = new URL('./generated/ormuz-api.d.ts', import.meta.url);
const BANNER =
  '// Generated from the served /openapi.json by openapi-typescript (test/api-document.int.spec.ts);\n' +
  '// ORMUZ_UPDATE_API_CLIENT=1 npm test -- services/approvals/test/api-document rewrites it. Do not edit.\n';

describe('the OpenAPI document', () => {
  const platform = new ApiPlatform();
  let document: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read as JSON

  beforeAll(async () => {
    await platform.open(['policy']);
    const answer = await platform.request<Record<string, unknown>>('GET', '/openapi.json');
    expect(answer.status).toBe(200);
    document = answer.body;
  });
  afterAll(() => platform.close());

  it('is served without a credential and is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');
    expect(document.openapi).toBe('3.1.0');
  });

  it('describes every route of the table with its parameters, body, reply and errors', () => {
    for (const route of API_ROUTES) {
      const op = document.paths[route.path]?.[route.method];
      expect({ route: route.operationId, operationId: op?.operationId }).toEqual({ route: route.operationId, operationId: route.operationId });
      for (const status of ['400', '401', '403', '404', '409', '413', '503']) expect(op.responses[status]).toBeDefined();
    }
    const submit = document.paths['/v1/tenants/{tenant}/calls'].post;
    expect(submit.parameters).toEqual([expect.objectContaining({ name: 'tenant', in: 'path', required: true })]);
    const body = document.components.schemas.PolicySubmitBody;
    expect(body.required).toEqual(['agent_id', 'tool', 'arguments', 'origin', 'device_id']);
    expect(body.properties.tenant).toBeUndefined();
    expect(document.components.schemas.ApiError.properties.error.required).toEqual(['code', 'message']);
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.security).toEqual([{ bearer: [] }]);
    const events = document.paths['/v1/tenants/{tenant}/events'].get;
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
  });

  it('generates a typed client that submits a call and reads its status', async () => {
    const source = BANNER + astToString(await openapiTS(structuredClone(document) as OpenAPI3));
    if (process.env.ORMUZ_UPDATE_API_CLIENT === '1') await writeFile(GENERATED, source);
    const kept = await readFile(GENERATED, 'utf8').catch(() => '');
    // A plain equality, so that a mismatch says how to regenerate rather than printing two large files.
    expect(kept === source ? 'up to date' : 'test/generated/ormuz-api.d.ts is out of date: rerun with ORMUZ_UPDATE_API_CLIENT=1').toBe(
      'up to date',
    );

    const api = createClient<paths>({
      baseUrl: platform.url,
      headers: { authorization: await platform.bearer('acme', ['operator'], 'ops@acme') },
    });
    const submitted = await api.POST('/v1/tenants/{tenant}/calls', {
      params: { path: { tenant: 'acme' } },
      body: {
        agent_id: 'agent-1',
        tool: 'device.screen_observe',
        arguments: {},
        origin: { kind: 'operation', operation_id: 'op-generated-client' },
        device_id: 'phone-1',
      },
    });
    expect(submitted.error).toBeUndefined();
    expect(submitted.data).toMatchObject({ status: 'authorized', duplicate: false });
    const status = await api.GET('/v1/tenants/{tenant}/calls/{call_id}', {
      params: { path: { tenant: 'acme', call_id: submitted.data!.call_id }, query: { timeline: true } },
    });
    expect(status.data?.status).toMatchObject({ status: 'authorized', call_id: submitted.data!.call_id });
    expect(status.data?.timeline?.map((e) => e.type)).toEqual([
      'ormuz.toolcall.requested.v1',
      'ormuz.toolcall.authorized.v1',
    ]);

    const refused = await api.GET('/v1/tenants/{tenant}/calls/{call_id}', {
      params: { path: { tenant: 'acme', call_id: 'call_unknown' } },
    });
    expect(refused.response.status).toBe(404);
    expect(refused.error?.error.code).toBe('call_not_found');
  });
});
