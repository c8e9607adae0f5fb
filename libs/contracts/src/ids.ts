/**
 * Identifiers that end up inside NATS subjects: tenants, call ids, conversation ids, device ids.
 *
 * A subject token must never carry `.`, `*`, `>` or whitespace, or one tenant's id could address another tenant's
 * subjects. Every id is checked against one strict charset before it touches a subject.
 */
import { OrmuzError } from './errors.js';

/** Letters, digits, `_` and `-`; 1 to 128 characters; must start with a letter or digit. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** Longest accepted identifier, in characters. */
export const IDENTIFIER_MAX_LENGTH = 128;

/** Raised when an id or tenant would be unsafe as a subject token. */
export class InvalidIdentifierError extends OrmuzError {
  readonly code = 'invalid_identifier';
  constructor(
    readonly field: string,
    readonly value: unknown,
    reason: string,
  ) {
    super(
      `${field} ${JSON.stringify(typeof value === 'string' && value.length > 64 ? `${value.slice(0, 64)}…` : value)} ` +
        `is not a valid identifier: ${reason}. Use 1 to ${IDENTIFIER_MAX_LENGTH} letters, digits, '_' or '-', ` +
        `starting with a letter or digit.`,
    );
  }
}

/** Explains why `value` is not an identifier, or returns `undefined` when it is one. */
export function identifierProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `expected a string, got ${value === null ? 'null' : typeof value}`;
  if (value.length === 0) return 'it is empty';
  if (value.length > IDENTIFIER_MAX_LENGTH) return `it is ${value.length} characters long`;
  const bad = /[.*>\s]/u.exec(value);
  if (bad) {
    const ch = bad[0];
    const name = ch === '.' ? "'.'" : ch === '*' ? "'*'" : ch === '>' ? "'>'" : 'whitespace';
    return `it contains ${name}, which NATS reads as a subject separator or wildcard`;
  }
  if (!IDENTIFIER_PATTERN.test(value)) return 'it contains characters outside the allowed set';
  return undefined;
}

/** Returns `value` typed as a string when it is a valid identifier; throws {@link InvalidIdentifierError} otherwise. */
export function assertIdentifier(field: string, value: unknown): string {
  const problem = identifierProblem(value);
  if (problem) throw new InvalidIdentifierError(field, value, problem);
  return value as string;
}
