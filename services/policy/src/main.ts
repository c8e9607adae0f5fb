import { runServiceMain } from '@ormuz/service-kit';
import { PolicyModule } from './app.module.js';
import { loadPolicyConfig } from './config.js';
import { POLICY_SCHEMA, POLICY_SHARED_SCHEMAS, policyMigrations } from './persistence/migrations.js';

const config = loadPolicyConfig(process.env);
await runServiceMain({
  service: 'policy',
  config,
  streams: ['calls'],
  schema: POLICY_SCHEMA,
  migrations: policyMigrations,
  sharedSchemas: POLICY_SHARED_SCHEMAS,
  module: (infra) => PolicyModule.with(infra, config),
});
