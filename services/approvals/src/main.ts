import { runServiceMain } from '@ormuz/service-kit';
import { ApprovalsModule } from './app.module.js';
import { APPROVALS_STREAMS, loadApprovalsConfig } from './config.js';
import { APPROVALS_SCHEMA, approvalsMigrations } from './persistence/migrations.js';

const config = loadApprovalsConfig(process.env);
await runServiceMain({
  service: 'approvals',
  config,
  streams: APPROVALS_STREAMS,
  schema: APPROVALS_SCHEMA,
  migrations: approvalsMigrations,
  module: (infra) => ApprovalsModule.with(infra, config),
  httpPort: config.httpPort,
  httpHost: config.httpHost,
});
