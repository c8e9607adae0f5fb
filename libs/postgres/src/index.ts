export { openDatabase, migrateSchema, PostgresUnavailableError, type DatabaseOptions } from './database.js';
export { LeaderLease, type LeaderLeaseOptions } from './leader-lease.js';
