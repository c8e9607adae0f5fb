export * from './access.js';
export * from './errors.js';
export * from './identity.js';
