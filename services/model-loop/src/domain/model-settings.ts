/**
 * Model settings (`ModelSettingsV1`): the rules for what may be stored and recorded, and how an agent's settings and a
 * start's combine. Pure: the settings name where a key is, never a key, and nothing here reads one.
 */
import type { ModelSettingsV1 } from '@ormuz/contracts';
import { InvalidModelSettingsError } from './errors.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The settings with surrounding blanks and a trailing `/` of the base URL removed, or InvalidModelSettingsError
 * listing every problem: a base URL that is not an http(s) URL or carries credentials, an environment variable name
 * that is not one, a key file path that is not absolute, both a key variable and a key file.
 */
export function checkedModelSettings(settings: ModelSettingsV1 | undefined): ModelSettingsV1 {
  if (!settings) return {};
  const problems: string[] = [];
  const out: { -readonly [K in keyof ModelSettingsV1]: ModelSettingsV1[K] } = { ...settings };
  if (settings.base_url !== undefined) {
    const raw = settings.base_url.trim();
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      problems.push(
        `base_url ${JSON.stringify(raw)} is not a URL (write the API's base URL, e.g. http://127.0.0.1:8080/v1)`,
      );
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') {
      problems.push(`base_url ${JSON.stringify(raw)} is not an http or https URL`);
    } else if (url && (url.username || url.password)) {
      problems.push('base_url must not carry credentials (name the variable or file holding the key instead)');
    }
    out.base_url = raw.replace(/\/+$/, '');
  }
  if (settings.api_key_env !== undefined) {
    const name = settings.api_key_env.trim();
    if (name !== '' && !ENV_NAME.test(name)) {
      problems.push(
        `api_key_env ${JSON.stringify(name)} is not an environment variable name (it names the variable holding the key)`,
      );
    }
    out.api_key_env = name;
  }
  if (settings.api_key_file !== undefined) {
    const path = settings.api_key_file.trim();
    if (!path.startsWith('/') || path.includes('\0')) {
      problems.push(`api_key_file ${JSON.stringify(path)} is not an absolute path`);
    }
    out.api_key_file = path;
  }
  if (out.api_key_env !== undefined && out.api_key_file !== undefined) {
    problems.push('name the key by api_key_env or by api_key_file, not both');
  }
  if (problems.length > 0) throw new InvalidModelSettingsError(problems);
  return Object.freeze(out);
}

/**
 * `over` on top of `base`; a key source in `over` replaces both of `base`'s (a start naming a key file does not
 * inherit the agent's key variable).
 */
export function mergeModelSettings(base: ModelSettingsV1, over: ModelSettingsV1): ModelSettingsV1 {
  const keyOver = over.api_key_env !== undefined || over.api_key_file !== undefined;
  const merged: { -readonly [K in keyof ModelSettingsV1]: ModelSettingsV1[K] } = { ...base, ...over };
  if (keyOver) {
    if (over.api_key_env === undefined) delete merged.api_key_env;
    if (over.api_key_file === undefined) delete merged.api_key_file;
  }
  return Object.freeze(merged);
}
