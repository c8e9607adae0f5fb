import { createServer } from 'node:net';

/**
 * A TCP port that was free on `host` a moment ago (the OS picks it). Another process may take it before you bind,
 * so bind promptly; prefer letting a server listen on port 0 when it can report its port.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => (port ? resolve(port) : reject(new Error(`No port was assigned on ${host}.`))));
    });
  });
}
