import { Module } from '@nestjs/common';
import { ApiController } from './api.controller.js';
import { CommandForwarder } from './command-forwarder.js';
import { OpenApiController } from './openapi.controller.js';
import { TenantEventsStream } from './tenant-events.stream.js';

/**
 * The public HTTP API under `/v1`, and its OpenAPI document at `/openapi.json` (decision 0017: the approvals service
 * is the platform's HTTP edge). Needs the infrastructure module (INFRA) in the importing application.
 */
@Module({
  controllers: [OpenApiController, ApiController],
  providers: [CommandForwarder, TenantEventsStream],
})
export class ApiModule {}
