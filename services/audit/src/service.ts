import type { ServiceOptions } from '@ormuz/service-kit';
import { AuditModule } from './app.module.js';
import type { AuditConfig } from './config.js';
import { AUDIT_SCHEMA, auditMigrations } from './persistence/migrations.js';
import { AUDITED_CONTEXTS } from './projections/audit-projections.js';

/** How audit is started, one declaration for `main.ts` and the tests: the streams it reads, its schema and module. */
export function auditService(config: AuditConfig): ServiceOptions {
  return {
    service: 'audit',
    config,
    // Audit owns no stream but reads all of them; declaring them is safe because ensureStreams is idempotent, and it
    // lets audit start before the services that write them.
    streams: AUDITED_CONTEXTS,
    schema: AUDIT_SCHEMA,
    migrations: auditMigrations,
    module: (infra) => AuditModule.with(infra, config),
  };
}
