/**
 * What a model turn is sent of tools and runtime instructions, and what that costs in the model's tokens: the one
 * computation behind model-loop's requests and `ormuz tools payload`. The system text is the standing instructions
 * and, when some offered tools are listed by name only, the directory line; the tools are the full schemas the
 * model's tier gets (see `tool-selection.ts`).
 */
import type { OfferedToolV1 } from '@ormuz/contracts';
import { LOOP_INSTRUCTIONS } from './instructions.js';
import { tokenCounter, tokenCounterFor, type TokenCounter, type TokenFamily } from './tokens/token-counter.js';
import { toolsWrapperTokens, toolTokens } from './tokens/tool-tokens.js';
import {
  selectTools,
  turnTools,
  type NamingProfile,
  type RenderedTool,
  type SelectionProfile,
  type SelectionReason,
  type ToolSelection,
} from './tool-selection.js';

/** Separates the standing instructions from the directory line in the system text. */
const SYSTEM_SEPARATOR = '\n\n';

export interface TurnPayloadInput {
  /** The agent's offered tools, as policy answers them. */
  readonly offered: readonly OfferedToolV1[];
  readonly profile: SelectionProfile & NamingProfile;
  /** Counts in the model's tokens (`tokenCounterFor(model)`). */
  readonly tokens: TokenCounter;
  readonly pinned?: readonly string[];
  readonly activated?: readonly string[];
  /** What the turn is about; '' for the first payload of a conversation, before any message. */
  readonly text?: string;
}

/** One turn's tools and instructions, as the provider is sent them. */
export interface TurnPayload {
  readonly selection: ToolSelection;
  /** The standing instructions, then the directory line when there is one. */
  readonly system: string;
  /** The directory line alone ('' when every offered tool is sent in full). */
  readonly directoryLine: string;
  readonly tools: readonly RenderedTool[];
  /** Names (as shown) of the offered tools sent by name only. */
  readonly directory: readonly string[];
}

/** Selects and renders one turn's tools and instructions. */
export function turnPayload(input: TurnPayloadInput): TurnPayload {
  const selection = selectTools({
    offered: input.offered,
    profile: input.profile,
    tokens: input.tokens,
    pinned: input.pinned ?? [],
    activated: input.activated ?? [],
    text: input.text ?? '',
  });
  const { tools, directory, instructions } = turnTools(selection, input.profile);
  const system = instructions ? `${LOOP_INSTRUCTIONS}${SYSTEM_SEPARATOR}${instructions}` : LOOP_INSTRUCTIONS;
  return { selection, system, directoryLine: instructions, tools, directory };
}

/** A payload's cost, part by part, in one model's tokens. */
export interface PayloadTokens {
  readonly family: TokenFamily;
  /** False when the family's count is an estimate (o200k times a factor), not its own tokenizer's. */
  readonly exact: boolean;
  /** The standing instructions. */
  readonly instructions: number;
  /** The directory line with its separator; 0 without one. */
  readonly directory: number;
  /** Each full schema with its per-tool wrapper, in the order sent. */
  readonly tools: readonly { readonly name: string; readonly reason: SelectionReason; readonly tokens: number }[];
  /** The wrapper around all tools (0 with none). */
  readonly toolsWrapper: number;
  readonly total: number;
}

/** Counts `payload` in `tokens`' family. */
export function payloadTokens(payload: TurnPayload, tokens: TokenCounter): PayloadTokens {
  const instructions = tokens.count(LOOP_INSTRUCTIONS);
  const directory = payload.directoryLine ? tokens.count(`${SYSTEM_SEPARATOR}${payload.directoryLine}`) : 0;
  const tools = payload.tools.map((tool, i) => ({
    name: tool.name,
    reason: payload.selection.full[i]!.reason,
    tokens: toolTokens(tokens, tool),
  }));
  const toolsWrapper = toolsWrapperTokens(tokens, tools.length);
  const total = instructions + directory + toolsWrapper + tools.reduce((sum, t) => sum + t.tokens, 0);
  return { family: tokens.family, exact: tokens.exact, instructions, directory, tools, toolsWrapper, total };
}

/** The first payload of a conversation for `model` at each tier, with its cost: what `ormuz tools payload` prints. */
export function initialPayloads(
  offered: readonly OfferedToolV1[],
  model: string,
  options: {
    readonly encodeToolNames?: boolean;
    readonly schemaBudgetTokens?: number;
    readonly family?: TokenFamily;
  } = {},
): { readonly small: PayloadTokens; readonly large: PayloadTokens } {
  const tokens = options.family ? tokenCounter(options.family) : tokenCounterFor(model);
  const of = (tier: 'small' | 'large') => {
    const profile = {
      tier,
      schemaBudgetTokens: options.schemaBudgetTokens ?? 0,
      encodeToolNames: options.encodeToolNames ?? false,
    };
    return payloadTokens(turnPayload({ offered, profile, tokens }), tokens);
  };
  return { small: of('small'), large: of('large') };
}
