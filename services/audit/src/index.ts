// Entry points for tests and the demo orchestrator: start audit in-process with a given configuration.
export { auditService } from './service.js';
export { AuditModule } from './app.module.js';
export { loadAuditConfig, type AuditConfig } from './config.js';
export { AUDIT_SCHEMA, auditMigrations } from './persistence/migrations.js';
export { AuditProjections, AUDITED_CONTEXTS } from './projections/audit-projections.js';
