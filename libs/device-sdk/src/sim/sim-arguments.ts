/**
 * Argument validators of the simulated device's tools: each throws `invalid_arguments` with a message that says what
 * to pass instead. Also the opaque continuation handles of paged results, and how typed text is compared.
 */
import type { JsonValue } from '@ormuz/contracts';
import { DeviceToolError, type ToolArguments } from '../device-executor.js';

export function invalid(message: string): DeviceToolError {
  return new DeviceToolError('invalid_arguments', message);
}

export function optionalInteger(args: ToolArguments, name: string, min: number, max: number): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

export function requiredText(args: ToolArguments, name: string, hint: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`Provide ${name}: ${hint}.`);
  return value;
}

export function optionalRef(args: ToolArguments): string | undefined {
  const ref = args['ref'];
  if (ref === undefined || ref === null) return undefined;
  if (typeof ref !== 'string' || ref === '') throw invalid('ref must be an element ref from device.screen_observe.');
  return ref;
}

export function oneOf<T extends string>(args: ToolArguments, name: string, allowed: readonly T[]): T {
  const value = args[name];
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw invalid(
    `${name} must be one of ${allowed.join(', ')}${value === undefined ? '' : `, not ${JSON.stringify(value)}`}.`,
  );
}

/** Where a paged result goes on: the state it was read from (`token`) and how far it got. */
export interface Handle {
  readonly token: string;
  readonly offset: number;
}

export function encodeHandle(value: Handle): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

export function decodeHandle(handle: JsonValue | undefined): Handle | undefined {
  if (handle === undefined || handle === null) return undefined;
  try {
    const value = JSON.parse(Buffer.from(String(handle), 'base64url').toString('utf8')) as {
      token: unknown;
      offset: unknown;
    };
    if (
      typeof value.token === 'string' &&
      typeof value.offset === 'number' &&
      Number.isInteger(value.offset) &&
      value.offset >= 0
    ) {
      return { token: value.token, offset: value.offset };
    }
  } catch {
    // falls through to the refusal below
  }
  throw invalid(
    'continuation is not a handle this device issued; pass the continuation from the previous result unchanged.',
  );
}

/** Text as a person compares it: same Unicode form, any case. */
export const fold = (text: string): string => text.normalize('NFC').toLocaleLowerCase();
