/**
 * What tools cost in a request, in the model's tokens. No API sends the JSON we hold verbatim: OpenAI renders each
 * function into a TypeScript-like `namespace functions` block of the system message, Anthropic writes the tool
 * definitions into a tool-use system prompt, and OpenAI-compatible servers put them into the model's chat template.
 * So a tool is counted as the JSON of its name, description and argument schema (the renderings are as long or
 * shorter: the estimate errs on the safe side) plus a fixed wrapper per tool and per request, estimated per family in
 * docs/model-tokens.md.
 */
import type { TokenCounter, TokenFamily } from './token-counter.js';

/** A tool as a model is shown it. */
export interface ToolText {
  readonly name: string;
  readonly description: string;
  readonly parameters: unknown;
}

/** The fixed wrapper tokens of a family's tool rendering. */
export interface ToolWrapper {
  /** Per tool: the rendering's own lines around a function (OpenAI: `// description`, `type name = (_: {…}) => any;`). */
  readonly perTool: number;
  /** Per request with any tool: the block around all tools (OpenAI's namespace, Anthropic's tool-use prompt). */
  readonly perRequest: number;
}

/**
 * The wrappers per family. OpenAI: 7 per function and 12 per request, as OpenAI's cookbook counts function tokens for
 * gpt-4o and gpt-4. Anthropic: the tool-use system prompt Anthropic documents for Claude 4 models with `tool_choice`
 * auto (346 tokens), and nothing per tool (the definition is the JSON). Chat templates of llama, qwen and mistral put
 * a preamble of a few dozen to a hundred tokens before the JSON tools: 100, rounded up.
 */
export const TOOL_WRAPPER: Readonly<Record<TokenFamily, ToolWrapper>> = {
  o200k: { perTool: 7, perRequest: 12 },
  cl100k: { perTool: 7, perRequest: 12 },
  anthropic: { perTool: 0, perRequest: 346 },
  llama: { perTool: 0, perRequest: 100 },
  qwen: { perTool: 0, perRequest: 100 },
  mistral: { perTool: 0, perRequest: 100 },
  other: { perTool: 0, perRequest: 100 },
};

/** The text a tool is counted by: its name, description and argument schema as JSON. */
export function toolText(tool: ToolText): string {
  return JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters });
}

/** Tokens of one tool in a request, its share of the per-request wrapper not included. */
export function toolTokens(counter: TokenCounter, tool: ToolText): number {
  return counter.count(toolText(tool)) + TOOL_WRAPPER[counter.family].perTool;
}

/** Tokens of the wrapper around all tools of a request: 0 with no tools. */
export function toolsWrapperTokens(counter: TokenCounter, toolCount: number): number {
  return toolCount === 0 ? 0 : TOOL_WRAPPER[counter.family].perRequest;
}
