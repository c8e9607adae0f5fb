import type { ServiceOptions } from '@ormuz/service-kit';
import { PolicyModule } from './app.module.js';
import type { PolicyConfig } from './config.js';
import { POLICY_SCHEMA, policyMigrations } from './persistence/migrations.js';

/** How policy is started, one declaration for `main.ts`, the tests and the benches: its stream, schemas and module. */
export function policyService(config: PolicyConfig): ServiceOptions {
  return {
    service: 'policy',
    config,
    streams: ['calls'],
    schema: POLICY_SCHEMA,
    migrations: policyMigrations,
    module: (infra) => PolicyModule.with(infra, config),
  };
}
