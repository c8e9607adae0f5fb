/**
 * The gate's catalog half in one call: resolve the name, check the grant, normalise, fill designer values, validate.
 */
import type { JsonValue } from '@ormuz/contracts';
import type { Catalog, CatalogEntry } from './catalog.js';
import { checkGrant, type Grant } from './grants.js';
import { normalizeArguments } from './normalize.js';
import { quote } from './text.js';
import { readToolName } from './tool-name.js';
import type { DesignerConfig, ToolDefinition } from './tool-definition.js';
import { validateArguments } from './validate.js';

/** A tool request as it arrives from a model or an API caller: nothing about it is trusted. */
export interface ToolRequest {
  /**
   * Canonical (`device.tap`) or provider-encoded (`device__tap`) name, in any case or camelCase, optionally with a
   * version (`device.tap@1`); see {@link readToolName}.
   */
  readonly tool: unknown;
  readonly arguments: unknown;
}

/** Why a request was refused before it could become a call. */
export type PrepareRefusalCode =
  | 'unknown_tool'
  | 'not_offered'
  /** The name carried a version (`@<n>`) that the grant does not offer. */
  | 'version_not_offered'
  | 'invalid_arguments'
  | 'unknown_argument'
  | 'designer_argument'
  | 'combination'
  /** A designer value is missing or invalid for this call: the deployment's fault, not the model's. */
  | 'configuration';

/** A request ready to become a call, or a refusal whose message is an instruction to the model. */
export type PreparedCall =
  | {
      readonly ok: true;
      readonly entry: CatalogEntry;
      readonly definition: ToolDefinition;
      /** The contract version the grant offers (a pin is never moved). */
      readonly version: number;
      readonly contract_hash: string;
      /** Normalised keys, designer values filled in, validated; a fresh plain-JSON object. */
      readonly args: Record<string, JsonValue>;
    }
  | {
      readonly ok: false;
      readonly reason_code: PrepareRefusalCode;
      /** Model-facing: what was wrong and what to do next. */
      readonly message: string;
      /** The canonical tool name, when the request named one the catalog knows. */
      readonly tool?: string;
    };

/**
 * Prepares one tool request: the name is resolved (a provider encoding is decoded), the grant decides whether it is
 * offered and at which version, the arguments are normalised (see {@link normalizeArguments}), designer values are
 * filled from `designer` (per call, e.g. per tenant) or else the catalog's configuration, and the result is
 * validated with the version's compiled schema and combination rules. Never throws, for any input: every failure
 * is a structured refusal with a reason code and an instruction.
 */
export function prepareCall(
  catalog: Catalog,
  grant: Grant,
  request: ToolRequest,
  designer?: DesignerConfig,
): PreparedCall {
  const raw = request === null || typeof request !== 'object' ? undefined : request.tool;
  if (typeof raw !== 'string' || raw.trim() === '') {
    return {
      ok: false,
      reason_code: 'unknown_tool',
      message: 'The tool request has no tool name. Call a tool by the exact name you were offered.',
    };
  }
  const called = readToolName(catalog, raw);
  const name = called.name;
  const check = checkGrant(catalog, grant, name);
  switch (check.kind) {
    case 'unknown':
      return { ok: false, reason_code: 'unknown_tool', message: check.message };
    case 'not_offered':
      return { ok: false, reason_code: 'not_offered', message: check.message, tool: name };
    case 'allowed':
      if (called.version !== undefined && called.version !== check.version) {
        return {
          ok: false,
          reason_code: 'version_not_offered',
          message: versionNotOffered(catalog, name, called.version, check.version),
          tool: name,
        };
      }
      break;
    default: {
      const unknown: never = check;
      return { ok: false, reason_code: 'unknown_tool', message: `Unexpected grant check ${quote(String(unknown))}.` };
    }
  }
  const { entry } = check;
  const normalized = normalizeArguments(entry, (request as ToolRequest).arguments, designer);
  if (!normalized.ok)
    return { ok: false, reason_code: normalized.reason_code, message: normalized.message, tool: entry.name };
  const valid = validateArguments(entry, normalized.args);
  if (!valid.ok) return { ok: false, reason_code: valid.reason_code, message: valid.message, tool: entry.name };
  return {
    ok: true,
    entry,
    definition: entry.definition,
    version: entry.version,
    contract_hash: entry.contractHash,
    args: normalized.args,
  };
}

function versionNotOffered(catalog: Catalog, name: string, asked: number, offered: number): string {
  const exists = catalog.resolve(name, asked) !== undefined;
  return (
    (exists
      ? `Version ${asked} of ${name} is not offered here; you are offered version ${offered}.`
      : `${name} has no version ${asked} (the catalog has version ${catalog.versions(name).join(', ')}); you are offered version ${offered}.`) +
    ` Call it as ${name}, without a version.`
  );
}
