import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadApprovalsConfig } from '../config.js';
import { WebhookAddressGuard, WebhookAddressRefused } from './webhook-address-guard.js';

const guard = (allowPrivate: boolean) =>
  new WebhookAddressGuard(loadApprovalsConfig(allowPrivate ? { ORMUZ_WEBHOOKS_ALLOW_PRIVATE: 'true' } : {}));

describe('the webhook address guard', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** POSTs to `url` with the guard's lookup: the status, or the error the connection failed with. */
  const post = (url: string, g: WebhookAddressGuard) =>
    new Promise<number | Error>((resolve) => {
      const req = request(url, { method: 'POST', lookup: g.lookup, family: 4 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', resolve);
      req.end();
    });

  it("refuses, in the connection's own lookup, a name that resolves to a private address", async () => {
    const refused = await post(`http://localhost:${port}/hook`, guard(false));
    expect(refused).toBeInstanceOf(WebhookAddressRefused);
    expect((refused as Error).message).toMatch(/^localhost resolves to 127\.0\.0\.1, a loopback address\./);
    expect(await post(`http://localhost:${port}/hook`, guard(true))).toBe(204);
  });

  it('refuses private literals and names at registration, and schemes other than http(s)', async () => {
    const g = guard(false);
    await expect(g.assertSendable(new URL('http://[::ffff:127.0.0.1]/'))).rejects.toThrow(
      /^::ffff:7f00:1 is a loopback address/,
    );
    await expect(g.assertSendable(new URL('http://localhost/'))).rejects.toThrow(/localhost resolves to .*loopback/);
    await expect(g.assertSendable(new URL('ftp://203.0.113.1/'))).rejects.toThrow(/http or https only, not ftp/);
    await expect(g.assertSendable(new URL('https://203.0.113.1/'))).resolves.toBeUndefined();
    await expect(guard(true).assertSendable(new URL('http://127.0.0.1/'))).resolves.toBeUndefined();
  });
});
