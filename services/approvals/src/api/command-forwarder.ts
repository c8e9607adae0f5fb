/**
 * Runs a command route: the request assembled from the HTTP request goes to the owning service over NATS with the
 * caller's own credential (the `Authorization` header, passed through as it came), and the service's answer comes
 * back as the response. The edge verifies nothing itself: the owning service checks the credential against the
 * access table, exactly as for any NATS caller, so the edge cannot widen anyone's access. A request without a
 * credential is refused here (401) with the message the service would give, so it never reaches the bus, and is
 * refused the same way whether the owning service runs or not.
 */
import { Inject, Injectable } from '@nestjs/common';
import { authorize, bearerOf } from '@ormuz/auth';
import { rpcContract } from '@ormuz/contracts';
import { callService, INFRA, type Infrastructure } from '@ormuz/service-kit';
import type { CommandRoute } from './api-routes.js';
import { routeRequest, type EdgeRequest } from './edge-request.js';

@Injectable()
export class CommandForwarder {
  constructor(@Inject(INFRA) private readonly infra: Infrastructure) {}

  /** The command's reply data. Throws what the service answered (RemoteError) or ServiceUnavailableError. */
  async forward(route: CommandRoute, http: EdgeRequest): Promise<unknown> {
    const bearer = bearerOf(firstValue(http.headers.authorization));
    if (bearer === undefined) authorize(route.command, undefined, {});
    const request = routeRequest(route, http);
    const { service, command } = rpcContract(route.command)!;
    return callService<unknown>(this.infra.nc, this.infra.config.namespace, service, command, request, {
      ...(bearer === undefined ? {} : { credential: { bearer } }),
      ...(route.unanswered ? { ifUnanswered: route.unanswered(request) } : {}),
    });
  }
}

function firstValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}
