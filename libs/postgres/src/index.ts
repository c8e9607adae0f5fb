export { openDatabase, migrateSchema, PostgresUnavailableError, type DatabaseOptions } from './database.js';
