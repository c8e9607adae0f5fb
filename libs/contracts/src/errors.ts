/**
 * Base of every error Ormuz raises on purpose. Each subclass has a stable `code`; transports map codes to their own
 * status in one place and never parse messages. Messages are sentences that say what to do next.
 */
export abstract class OrmuzError extends Error {
  abstract readonly code: string;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** True when `err` is an {@link OrmuzError}, optionally with the given code. */
export function isOrmuzError(err: unknown, code?: string): err is OrmuzError {
  return err instanceof OrmuzError && (code === undefined || err.code === code);
}

/** Input that failed a JSON Schema at a transport edge or before an append. */
export class SchemaViolationError extends OrmuzError {
  readonly code = 'schema_violation';
  constructor(
    readonly schema: string,
    readonly problems: readonly string[],
  ) {
    super(`${schema} is invalid: ${problems.join('; ')}.`);
  }
}
