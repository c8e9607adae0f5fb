/**
 * Which tool schemas one model turn is sent, fitted to the model's tier. Pure: the offered tools (the agent's grant
 * intersected with the catalog, as policy answers them), the model's profile and the conversation are passed in.
 *
 * A schema costs context on every turn, and a small model's window can be filled by schemas alone before the task
 * starts. So a large model gets every offered tool in full, and a small model gets a few in full — the core `ormuz.*`
 * tools, the tools activated in this conversation, the tools the owner pinned, and the tools most relevant to the
 * turn while they fit its budget — plus a line naming the rest, which it can search and activate. The selection
 * only decides what is sent first: it never adds a tool the grant does not offer, and policy still decides every call.
 */
import { contentWords, CORE_EXTENSION_NAME, providerFunctionName } from '@ormuz/catalog';
import type { JsonValue, OfferedToolV1 } from '@ormuz/contracts';
import type { TokenCounter } from './tokens/token-counter.js';
import { toolTokens } from './tokens/tool-tokens.js';

/** The core tools a small model needs to reach the directory. */
export const SEARCH_TOOL = `${CORE_EXTENSION_NAME}.search_tools`;
export const ACTIVATE_TOOL_NAME = `${CORE_EXTENSION_NAME}.activate_tool`;

/** Why a tool's full schema is sent this turn. */
export type SelectionReason = 'all' | 'core' | 'activated' | 'pinned' | 'relevant';

/** What a turn is offered: full schemas (with why) and the names of the rest. */
export interface ToolSelection {
  /** Tools sent in full, canonical names: core, activated, pinned, then relevant (best first); `all` for large. */
  readonly full: readonly { readonly tool: OfferedToolV1; readonly reason: SelectionReason }[];
  /** Offered tools not sent in full, canonical names, sorted. Empty for a large model. */
  readonly directory: readonly string[];
}

/** What selection needs of a model's profile (model-loop's `ModelProfile` has it). */
export interface SelectionProfile {
  /** `large`: every offered tool in full. `small`: core, activated, pinned and a few relevant tools; the rest by name. */
  readonly tier: 'large' | 'small';
  /** Tokens, in the model's own tokens, of relevant tools a `small` model may be sent beyond the ones it always gets. */
  readonly schemaBudgetTokens: number;
}

/** How a model wants tool names: encoded (`device__tap`) when its API forbids dots. */
export interface NamingProfile {
  readonly encodeToolNames: boolean;
}

export interface SelectionInput {
  /** The agent's offered tools; nothing outside this list is ever selected. */
  readonly offered: readonly OfferedToolV1[];
  readonly profile: SelectionProfile;
  /** Counts in the model's tokens (`tokenCounterFor`): what a relevant tool costs of the budget. */
  readonly tokens: TokenCounter;
  /** Pinned by the owner (start option and configuration), canonical names. */
  readonly pinned: readonly string[];
  /** Activated in this conversation with `ormuz.activate_tool`, canonical names. */
  readonly activated: readonly string[];
  /** The text the turn is about (model-loop's `turnText`): relevance is scored against it. */
  readonly text: string;
  /** Most tools a small model gets for relevance alone. Default 3. */
  readonly maxRelevant?: number;
}

/** Selects the full schemas and the directory for one turn. Never returns a tool that is not in `offered`. */
export function selectTools(input: SelectionInput): ToolSelection {
  const offered = [...input.offered].sort((a, b) => compare(a.name, b.name));
  if (input.profile.tier === 'large') {
    return { full: offered.map((tool) => ({ tool, reason: 'all' as const })), directory: [] };
  }
  const byName = new Map(offered.map((t) => [t.name, t]));
  const chosen = new Map<string, SelectionReason>();
  const take = (names: Iterable<string>, reason: SelectionReason) => {
    for (const name of names) if (byName.has(name) && !chosen.has(name)) chosen.set(name, reason);
  };
  take(
    offered.filter((t) => t.name.startsWith(`${CORE_EXTENSION_NAME}.`)).map((t) => t.name),
    'core',
  );
  take([...input.activated].sort(compare), 'activated');
  take(input.pinned, 'pinned');

  let budget = input.profile.schemaBudgetTokens;
  let room = input.maxRelevant ?? 3;
  const scores = relevanceScores(
    input.text,
    offered.filter((t) => !chosen.has(t.name)),
  );
  for (const { name } of scores) {
    if (room === 0) break;
    const cost = toolTokens(input.tokens, byName.get(name)!);
    if (cost > budget) continue;
    chosen.set(name, 'relevant');
    budget -= cost;
    room -= 1;
  }
  return {
    full: [...chosen].map(([name, reason]) => ({ tool: byName.get(name)!, reason })),
    directory: offered.filter((t) => !chosen.has(t.name)).map((t) => t.name),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Relevance
// ---------------------------------------------------------------------------------------------------------------

/** One tool's relevance to a text; only tools sharing at least one word with it get a score. */
export interface RelevanceScore {
  readonly name: string;
  /** Greater is more relevant; comparable only within one call. */
  readonly score: number;
}

const NAME_WEIGHT = 3;
const DESCRIPTION_WEIGHT = 1;

/**
 * Ranks `tools` by how much `text` is about them: each distinct word of the text that appears in a tool's name
 * counts 3, in its description 1, weighted by how rare the word is among the tools (a word every tool mentions
 * tells nothing apart). Tools with no shared word are left out. Best first; ties by name. Pure and total.
 */
export function relevanceScores(
  text: string,
  tools: readonly Pick<OfferedToolV1, 'name' | 'description'>[],
): RelevanceScore[] {
  const wanted = new Set(contentWords(text));
  if (wanted.size === 0 || tools.length === 0) return [];
  const indexed = tools.map((t) => ({
    name: t.name,
    nameWords: new Set(contentWords(t.name)),
    descriptionWords: new Set(contentWords(t.description)),
  }));
  const weight = new Map<string, number>();
  for (const w of wanted) {
    const df = indexed.filter((t) => t.nameWords.has(w) || t.descriptionWords.has(w)).length;
    if (df > 0) weight.set(w, Math.log(1 + indexed.length / df));
  }
  const scored: RelevanceScore[] = [];
  for (const t of indexed) {
    let score = 0;
    for (const [w, idf] of weight) {
      score += idf * (t.nameWords.has(w) ? NAME_WEIGHT : t.descriptionWords.has(w) ? DESCRIPTION_WEIGHT : 0);
    }
    if (score > 0) scored.push({ name: t.name, score: Math.round(score * 1000) / 1000 });
  }
  return scored.sort((a, b) => b.score - a.score || compare(a.name, b.name));
}

// ---------------------------------------------------------------------------------------------------------------
// What the provider is sent
// ---------------------------------------------------------------------------------------------------------------

/** Most directory names written into the instructions; the rest are counted and found by searching. */
export const MAX_DIRECTORY_NAMES = 40;

/** A tool as the provider is given it (model-loop's `ToolOffer`). */
export interface RenderedTool {
  /** The canonical name, or its `providerFunctionName` encoding when the profile says `encodeToolNames`. */
  readonly name: string;
  readonly description: string;
  readonly parameters: { readonly [key: string]: JsonValue };
}

/** One turn's tools as a provider is given them. */
export interface TurnTools {
  /** Full schemas, names encoded when the profile asks. */
  readonly tools: readonly RenderedTool[];
  /** Directory names as the model is shown them. */
  readonly directory: readonly string[];
  /** Sentence(s) to append to the standing instructions; '' when there is no directory. */
  readonly instructions: string;
}

/** The name a model with `profile` is shown for canonical `name`. */
export function shownName(name: string, profile: NamingProfile): string {
  if (!profile.encodeToolNames) return name;
  try {
    return providerFunctionName(name);
  } catch {
    return name;
  }
}

/** Turns a selection into what the provider is sent: encoded names, and the directory as one instruction. */
export function turnTools(selection: ToolSelection, profile: NamingProfile): TurnTools {
  const show = (name: string) => shownName(name, profile);
  const tools = selection.full.map(({ tool }) => ({
    name: show(tool.name),
    description: tool.description,
    parameters: tool.parameters as { readonly [key: string]: JsonValue },
  }));
  const directory = selection.directory.map(show);
  return { tools, directory, instructions: directoryInstructions(selection, directory, show) };
}

function directoryInstructions(
  selection: ToolSelection,
  directory: readonly string[],
  show: (name: string) => string,
): string {
  if (directory.length === 0) return '';
  const full = new Set(selection.full.map(({ tool }) => tool.name));
  const listed = directory.slice(0, MAX_DIRECTORY_NAMES).join(', ');
  const more = directory.length - MAX_DIRECTORY_NAMES;
  const names = more > 0 ? `${listed} and ${more} more` : listed;
  const how =
    full.has(SEARCH_TOOL) && full.has(ACTIVATE_TOOL_NAME)
      ? `To use one, find it with ${show(SEARCH_TOOL)} (a few words describing the action), load it with ` +
        `${show(ACTIVATE_TOOL_NAME)} and call it from your next step.`
      : full.has(ACTIVATE_TOOL_NAME)
        ? `To use one, load it by exact name with ${show(ACTIVATE_TOOL_NAME)} and call it from your next step.`
        : 'Their schemas are not shown; call one only if you know its arguments, and follow the instructions of a refusal.';
  return `Further tools you may use are listed by name only, to save space: ${names}. ${how}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
