// Entry points for tests and the demo orchestrator.
export { approvalsService } from './service.js';
export { ApprovalsConsumers, ApprovalsModule } from './app.module.js';
export { APPROVALS_STREAMS, loadApprovalsConfig, type ApprovalsConfig, type WebhookSettings } from './config.js';
export { API_ROUTES, type ApiRoute, type CommandRoute, type EventsRoute } from './api/api-routes.js';
export { APPROVALS_SCHEMA, approvalsMigrations } from './persistence/migrations.js';
export { WEBHOOK_REACTION } from './reactors/webhook-deliveries.reaction.js';
export { SIGNATURE_HEADER, signatureHeader, signatureProblem } from './domain/webhook-signature.js';
