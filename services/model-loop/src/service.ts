import type { ServiceOptions } from '@ormuz/service-kit';
import { ModelLoopModule, type ModelLoopModuleOptions } from './app.module.js';
import { MODEL_LOOP_STREAMS, type ModelLoopConfig } from './config.js';
import { MODEL_LOOP_SCHEMA, modelLoopMigrations } from './persistence/migrations.js';

/**
 * How model-loop is started, one declaration for `main.ts` and the tests: its streams, schema and module (`options`
 * lets a test give other model providers).
 */
export function modelLoopService(config: ModelLoopConfig, options: ModelLoopModuleOptions = {}): ServiceOptions {
  return {
    service: 'model-loop',
    config,
    streams: MODEL_LOOP_STREAMS,
    schema: MODEL_LOOP_SCHEMA,
    migrations: modelLoopMigrations,
    module: (infra) => ModelLoopModule.with(infra, config, options),
  };
}
