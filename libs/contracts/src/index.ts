export * from './errors.js';
export * from './ids.js';
export * from './canonical.js';
export * from './envelope.js';
export * from './schema-registry.js';
export * from './subjects.js';
export * from './events/tool-call.events.js';
export * from './device-protocol.js';
