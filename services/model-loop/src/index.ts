// Entry points for tests and the demo orchestrator: start model-loop in-process with a given configuration.
export { modelLoopService } from './service.js';
export { ModelLoopModule, type ModelLoopModuleOptions } from './app.module.js';
export { loadModelLoopConfig, type ModelLoopConfig } from './config.js';
export { MODEL_LOOP_SCHEMA, modelLoopMigrations } from './persistence/migrations.js';
export { MODEL_LOOP_STREAMS } from './config.js';
export {
  LARGE_MODEL,
  type ModelProfile,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ToolOffer,
} from './domain/model-provider.js';
export {
  ScriptedProvider,
  demoScript,
  directoryScript,
  DEMO_MESSAGE,
  DIRECTORY_QUERY,
  SCRIPTS,
  SMALL_MODEL,
  type Script,
  type ScriptEntry,
} from './providers/scripted.provider.js';
