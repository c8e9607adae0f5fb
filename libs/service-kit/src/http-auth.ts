/**
 * HTTP routes identify their caller the way NATS commands do: `Authorization: Bearer <token or API key>`, verified by
 * the service's authenticator. The guard runs before every route of a controller it decorates and leaves the identity
 * on the request; `@Caller()` hands it to the route, which checks it with `checkRequest` once it has assembled the
 * request from path and body.
 */
import { createParamDecorator, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Identity } from '@ormuz/auth';
import { INFRA, type Infrastructure } from './infrastructure.js';

interface IdentifiedRequest {
  readonly headers: Record<string, string | string[] | undefined>;
  ormuzCaller?: Identity;
}

@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(@Inject(INFRA) private readonly infra: Infrastructure) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<IdentifiedRequest>();
    const header = request.headers.authorization;
    const caller = await this.infra.authenticator.fromHeader(Array.isArray(header) ? header[0] : header);
    if (caller) request.ormuzCaller = caller;
    // No credential is not refused here: checkRequest refuses it for every route that needs one, with the same
    // message a NATS caller gets.
    return true;
  }
}

/** The verified caller of the current HTTP request (undefined when it presented no credential). */
export const Caller = createParamDecorator(
  (_: unknown, context: ExecutionContext): Identity | undefined =>
    context.switchToHttp().getRequest<IdentifiedRequest>().ormuzCaller,
);
