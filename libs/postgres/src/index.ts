export {
  openDatabase,
  migrateSchema,
  PostgresUnavailableError,
  DatabaseMissingError,
  redactDatabaseUrl,
  type DatabaseOptions,
} from './database.js';
export { claimNamespace, NamespaceMismatchError, PLATFORM_SCHEMA, type NamespaceClaim } from './namespace.js';
export { LeaderLease, leaseHolder, type LeaderLeaseOptions } from './leader-lease.js';
