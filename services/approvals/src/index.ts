// Entry points for tests and the demo orchestrator.
export { ApprovalsModule, InboxProjectionRunner } from './app.module.js';
export { loadApprovalsConfig, type ApprovalsConfig } from './config.js';
export { APPROVALS_SCHEMA, approvalsMigrations } from './persistence/migrations.js';
