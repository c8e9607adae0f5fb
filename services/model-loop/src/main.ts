import { runServiceMain } from '@ormuz/service-kit';
import { ModelLoopModule } from './app.module.js';
import { loadModelLoopConfig, MODEL_LOOP_STREAMS } from './config.js';
import { MODEL_LOOP_SCHEMA, modelLoopMigrations } from './persistence/migrations.js';

const config = loadModelLoopConfig(process.env);
await runServiceMain({
  service: 'model-loop',
  config,
  streams: MODEL_LOOP_STREAMS,
  schema: MODEL_LOOP_SCHEMA,
  migrations: modelLoopMigrations,
  module: (infra) => ModelLoopModule.with(infra, config),
});
