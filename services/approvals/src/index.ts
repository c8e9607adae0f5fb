// Entry points for tests and the demo orchestrator.
export { ApprovalsModule, InboxProjectionRunner } from './app.module.js';
export { APPROVALS_STREAMS, loadApprovalsConfig, type ApprovalsConfig } from './config.js';
export { API_ROUTES, type ApiRoute, type CommandRoute, type EventsRoute } from './api/api-routes.js';
export { APPROVALS_SCHEMA, approvalsMigrations } from './persistence/migrations.js';
