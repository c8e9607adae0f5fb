import type { IncomingMessage, ServerResponse } from 'node:http';
import { SameOriginMiddleware } from './same-origin.middleware.js';

function run(method: string, headers: Record<string, string>) {
  const req = { method, headers } as unknown as IncomingMessage;
  const answered: { status?: number; body?: string } = {};
  const res = {
    writeHead: (status: number) => (answered.status = status),
    end: (body: string) => (answered.body = body),
  } as unknown as ServerResponse;
  let passed = false;
  new SameOriginMiddleware().use(req, res, () => (passed = true));
  return { passed, ...answered };
}

describe('SameOriginMiddleware', () => {
  const host = '127.0.0.1:8081';

  it("passes the service's own pages, and requests that are not from a page (no Origin)", () => {
    expect(run('POST', { host, origin: 'http://127.0.0.1:8081' }).passed).toBe(true);
    expect(run('POST', { host }).passed).toBe(true);
  });

  it('refuses a state-changing request from another origin with 403, whatever its method', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const origin of [
        'https://evil.example',
        'null',
        'http://localhost:8081',
        'http://127.0.0.1:8082',
        'garbage',
      ]) {
        const r = run(method, { host, origin });
        expect(r).toMatchObject({ passed: false, status: 403 });
        expect(JSON.parse(r.body!)).toMatchObject({ error: { code: 'forbidden' } });
      }
    }
  });

  it('lets reads through from anywhere: they change nothing, and CORS keeps their answers from other pages', () => {
    expect(run('GET', { host, origin: 'https://evil.example' }).passed).toBe(true);
    expect(run('HEAD', { host, origin: 'https://evil.example' }).passed).toBe(true);
  });
});
