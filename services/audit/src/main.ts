import { runServiceMain } from '@ormuz/service-kit';
import { AuditModule } from './app.module.js';
import { loadAuditConfig } from './config.js';
import { AUDIT_SCHEMA, auditMigrations } from './persistence/migrations.js';
import { AUDITED_CONTEXTS } from './projections/audit-projections.js';

const config = loadAuditConfig(process.env);
// Audit owns no stream but reads all of them; declaring them is safe because ensureStreams is idempotent, and it
// lets audit start before the services that write them.
await runServiceMain({
  service: 'audit',
  config,
  streams: AUDITED_CONTEXTS,
  schema: AUDIT_SCHEMA,
  migrations: auditMigrations,
  module: (infra) => AuditModule.with(infra, config),
});
