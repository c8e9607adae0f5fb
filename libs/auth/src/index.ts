export * from './access.js';
export * from './errors.js';
export * from './identity.js';
export * from './api-keys/index.js';
export { AUTH_SCHEMA, authMigrations } from './migrations.js';
