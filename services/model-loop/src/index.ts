// Entry points for tests and the demo orchestrator: start model-loop in-process with a given configuration.
export { ModelLoopModule, type ModelLoopModuleOptions } from './app.module.js';
export { loadModelLoopConfig, type ModelLoopConfig } from './config.js';
export { MODEL_LOOP_SCHEMA, modelLoopMigrations } from './persistence/migrations.js';
export { MODEL_LOOP_STREAMS } from './config.js';
export type { ModelProvider, ModelReply, ModelRequest } from './domain/model-provider.js';
export { ScriptedProvider, demoScript, DEMO_MESSAGE, type Script } from './providers/scripted.provider.js';
