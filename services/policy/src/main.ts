import { runServiceMain } from '@ormuz/service-kit';
import { PolicyModule } from './app.module.js';
import { loadPolicyConfig } from './config.js';
import { POLICY_SCHEMA, policyMigrations } from './persistence/migrations.js';

const config = loadPolicyConfig(process.env);
await runServiceMain({
  service: 'policy',
  config,
  streams: ['calls'],
  schema: POLICY_SCHEMA,
  migrations: policyMigrations,
  module: (infra) => PolicyModule.with(infra, config),
});
