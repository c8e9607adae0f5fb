// Entry points for tests, the demo orchestrator and the benchmarks (tools/benches): start policy in-process with a
// given configuration.
export { policyService } from './service.js';
export { PolicyModule } from './app.module.js';
export { loadPolicyConfig, type PolicyConfig } from './config.js';
export { POLICY_SCHEMA, policyMigrations } from './persistence/migrations.js';
// The pure decision, for bench:gate's in-process figures.
export { decideGate, type GateContext, type GateRequest } from '@ormuz/gate';
