import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses (403) any state-changing request a browser sent from another origin, on every route of the service.
 *
 * The console keeps its token in sessionStorage and sends it as an `Authorization` header, never as a cookie, so a
 * page of another site cannot make the browser send it: a forged cross-site form POST arrives without a credential
 * and is refused 401 anyway. This check is the second wall: whatever a future route accepts, a request whose
 * `Origin` is not this service's own (the host it was sent to) changes nothing. Requests without `Origin` (the CLI,
 * curl, other services) are not browser requests from a page and pass on to authentication.
 */
@Injectable()
export class SameOriginMiddleware implements NestMiddleware {
  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    const origin = req.headers.origin;
    if (SAFE_METHODS.has(req.method ?? 'GET') || origin === undefined || sameOrigin(origin, req.headers.host)) {
      next();
      return;
    }
    res.writeHead(403, { 'content-type': 'application/json; charset=utf-8' });
    res.end(
      JSON.stringify({
        error: {
          code: 'forbidden',
          message: `A ${req.method} from a page of another origin (${origin.slice(0, 200)}) is refused: only this service's own console may change state from a browser.`,
        },
      }),
    );
  }
}

/** True when `origin` (`scheme://host[:port]`) names the host the request was sent to; `null` origins never do. */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (!host) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}
