export * from './access.js';
export * from './api-keys/index.js';
export * from './authenticator.js';
export * from './dev-issuer.js';
export * from './errors.js';
export * from './identity.js';
export * from './jwt-verifier.js';
export { AUTH_SCHEMA, authMigrations } from './migrations.js';
export * from './settings.js';
