/**
 * Serves every row of the route table. One handler per row is added to this controller when the module loads, with
 * Nest's own route decorators, so Nest matches methods and paths (and answers 404 for the rest) while the table stays
 * the one place a route is written.
 */
import type { ServerResponse } from 'node:http';
import { Controller, Delete, Get, HttpCode, Post, Put, Req, Res } from '@nestjs/common';
import { API_ROUTES, type ApiRoute, type HttpMethod } from './api-routes.js';
import { CommandForwarder } from './command-forwarder.js';
import { expressPath, type EdgeRequest } from './edge-request.js';
import { TenantEventsStream } from './tenant-events.stream.js';

@Controller()
export class ApiController {
  constructor(
    private readonly forwarder: CommandForwarder,
    private readonly events: TenantEventsStream,
  ) {}

  /** What every route's handler calls with its row. */
  handle(route: ApiRoute, http: EdgeRequest, res: ServerResponse): Promise<unknown> {
    return route.kind === 'command' ? this.forwarder.forward(route, http) : this.events.serve(route, http, res);
  }
}

const ROUTE_DECORATORS: Readonly<Record<HttpMethod, (path: string) => MethodDecorator>> = {
  get: Get,
  post: Post,
  put: Put,
  delete: Delete,
};

for (const route of API_ROUTES) {
  const prototype = ApiController.prototype as unknown as Record<string, unknown>;
  const key = route.operationId;
  if (Object.hasOwn(prototype, key)) throw new Error(`Two routes of the API are named ${key}.`);
  prototype[key] = function (this: ApiController, http: EdgeRequest, res: ServerResponse) {
    return this.handle(route, http, res);
  };
  const descriptor = Object.getOwnPropertyDescriptor(prototype, key)!;
  ROUTE_DECORATORS[route.method](expressPath(route.path))(prototype, key, descriptor);
  // Every answer is the command's reply, created or not: 200, as the document says.
  HttpCode(200)(prototype, key, descriptor);
  Req()(prototype, key, 0);
  // The event stream writes its own response; a command's reply is returned, and Nest sends it as JSON.
  if (route.kind === 'events') Res()(prototype, key, 1);
}
