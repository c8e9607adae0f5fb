/**
 * The probes' HTTP listener (decision 0022): `GET /livez` answers 200 whenever the event loop does (it checks no
 * dependency, so a restart is never the answer to an outage elsewhere), `GET /readyz` answers 200 or 503 with the
 * {@link ReadinessCheck}'s result as JSON, and `GET /metrics` the process's Prometheus metrics (decision 0030). A port
 * of its own, apart from any edge the service serves: probes and scrapes need no credential, and a NetworkPolicy can
 * keep them off the public routes.
 */
import { createServer, type Server } from 'node:http';
import type { LivenessV1 } from '@ormuz/contracts';
import type { ServiceMetrics } from './metrics/service-metrics.js';
import type { ReadinessCheck } from './readiness.js';

const SERVED = 'probes are GET /livez and GET /readyz, metrics GET /metrics';

export class ProbeServer {
  private constructor(
    private readonly server: Server,
    /** `http://<host>:<port>` it listens on. */
    readonly url: string,
  ) {}

  /** Listens on `host:port` (0: any free port). Rejects with the listen error (a port in use, say). */
  static async listen(
    service: string,
    readiness: ReadinessCheck,
    metrics: ServiceMetrics,
    port: number,
    host: string,
  ): Promise<ProbeServer> {
    const server = createServer((req, res) => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(body));
      };
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        reply(405, { error: `${req.method} is not served here: ${SERVED}` });
      } else if (path === '/livez') {
        const body: LivenessV1 = { service, alive: true, pid: process.pid };
        reply(200, body);
      } else if (path === '/readyz') {
        void readiness.evaluate().then((r) => reply(r.ready ? 200 : 503, r));
      } else if (path === '/metrics') {
        metrics.exposition().then(
          ({ contentType, body }) => {
            res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
            res.end(body);
          },
          (err: unknown) => reply(500, { error: `the metrics could not be rendered: ${String(err)}` }),
        );
      } else {
        reply(404, { error: `${path} is not served here: ${SERVED}` });
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as { port: number };
    const shown = host.includes(':') ? `[${host}]` : host;
    return new ProbeServer(server, `http://${shown}:${address.port}`);
  }

  /** Stops listening and ends open connections, so that probes fail from here on. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
