// Entry points for tests and the demo orchestrator: start policy in-process with a given configuration.
export { PolicyModule } from './app.module.js';
export { loadPolicyConfig, type PolicyConfig } from './config.js';
export { POLICY_SCHEMA, policyMigrations } from './persistence/migrations.js';
