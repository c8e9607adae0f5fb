/**
 * The checks every adapter makes on the tool requests a model sent, before the loop sees them: the name must be one
 * the turn offered, the argument text must be a JSON object, the turn holds at most a bounded number of requests, and
 * a request cut short by the output limit is not run. A request failing one is still returned, marked `invalid` with
 * a sentence for the model, so the loop answers it with an error result instead of dropping it or running `{}`.
 */
import type { JsonValue } from '@ormuz/contracts';
import type { ModelRequest, ModelToolRequest } from '../../domain/model-provider.js';

/** A tool request as the wire carried it: arguments as text (OpenAI) or as a value (Anthropic). */
export interface RawToolRequest {
  readonly name: string;
  readonly arguments: string | unknown;
}

/** Longest tool name a transcript records. */
const MAX_NAME = 200;
/** Longest unparsable argument text kept in the transcript, so the model can see what it sent. */
const MAX_KEPT_TEXT = 2000;

type Args = { readonly [key: string]: JsonValue };

/**
 * Checks `raw` against the turn's offers. `cut`: the reply stopped at the output limit, so its last request may be
 * incomplete even when its text happens to parse.
 */
export function checkToolRequests(
  raw: readonly RawToolRequest[],
  request: Pick<ModelRequest, 'tools' | 'directory'>,
  maxPerTurn: number,
  cut: boolean,
): ModelToolRequest[] {
  const offered = new Set(request.tools.map((t) => t.name));
  return raw.map((r, index) => {
    const parsed = parseArguments(r.arguments);
    const name = r.name.length > MAX_NAME ? r.name.slice(0, MAX_NAME) : r.name || '(no name)';
    const args: Args = parsed.ok ? parsed.value : { unparsed_arguments: parsed.text.slice(0, MAX_KEPT_TEXT) };
    const invalid =
      index >= maxPerTurn
        ? `This turn asked for ${raw.length} tools; at most ${maxPerTurn} are run per turn, so this request (number ` +
          `${index + 1}) was not run. Ask for it again in a later turn if it is still needed.`
        : cut && index === raw.length - 1
          ? 'Your reply reached the output limit while writing this request, so it may be incomplete and was not run. Ask again with complete arguments.'
          : !offered.has(r.name)
            ? notOffered(r.name, request.directory)
            : !parsed.ok
              ? `The arguments are not a JSON object (${parsed.why}), so nothing was run. Send the arguments as one JSON object matching the tool's schema.`
              : undefined;
    return invalid === undefined ? { name, arguments: args } : { name, arguments: args, invalid };
  });
}

function notOffered(name: string, directory: readonly string[]): string {
  if (directory.includes(name)) {
    return `The tool ${JSON.stringify(name)} is listed in the directory but not activated, so nothing was run. Activate it with the activation tool first, then call it.`;
  }
  return `No tool named ${JSON.stringify(name.slice(0, MAX_NAME))} was offered to you, so nothing was run. Use only the tools you are offered, by their exact names.`;
}

type Parsed = { ok: true; value: Args } | { ok: false; text: string; why: string };

function parseArguments(value: unknown): Parsed {
  if (typeof value !== 'string') {
    return isObject(value)
      ? { ok: true, value: value as Args }
      : { ok: false, text: JSON.stringify(value) ?? '', why: 'not an object' };
  }
  try {
    const parsed = JSON.parse(value) as unknown;
    return isObject(parsed) ? { ok: true, value: parsed as Args } : { ok: false, text: value, why: 'not an object' };
  } catch (err) {
    return { ok: false, text: value, why: err instanceof Error ? err.message : 'not JSON' };
  }
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
