import type { ServiceOptions } from '@ormuz/service-kit';
import { ApprovalsModule } from './app.module.js';
import { APPROVALS_STREAMS, type ApprovalsConfig } from './config.js';
import { APPROVALS_SCHEMA, approvalsMigrations } from './persistence/migrations.js';

/**
 * How approvals is started, one declaration for `main.ts` and the tests: its streams, schema and module, and the
 * HTTP edge on the configured address.
 */
export function approvalsService(config: ApprovalsConfig): ServiceOptions {
  return {
    service: 'approvals',
    config,
    streams: APPROVALS_STREAMS,
    schema: APPROVALS_SCHEMA,
    migrations: approvalsMigrations,
    module: (infra) => ApprovalsModule.with(infra, config),
    httpPort: config.httpPort,
    httpHost: config.httpHost,
  };
}
