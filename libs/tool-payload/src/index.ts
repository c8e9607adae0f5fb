// What a model is sent of tools and instructions, and what that costs in its own tokens.
export { LOOP_INSTRUCTIONS } from './instructions.js';
export {
  initialPayloads,
  payloadTokens,
  turnPayload,
  type PayloadTokens,
  type TurnPayload,
  type TurnPayloadInput,
} from './payload.js';
export {
  ACTIVATE_TOOL_NAME,
  MAX_DIRECTORY_NAMES,
  relevanceScores,
  SEARCH_TOOL,
  selectTools,
  shownName,
  turnTools,
  type NamingProfile,
  type RelevanceScore,
  type RenderedTool,
  type SelectionInput,
  type SelectionProfile,
  type SelectionReason,
  type ToolSelection,
  type TurnTools,
} from './tool-selection.js';
export {
  O200K_FACTOR,
  TOKEN_FAMILIES,
  tokenCounter,
  tokenCounterFor,
  tokenFamilyOf,
  type TokenCounter,
  type TokenFamily,
} from './tokens/token-counter.js';
export {
  TOOL_WRAPPER,
  toolText,
  toolTokens,
  toolsWrapperTokens,
  type ToolText,
  type ToolWrapper,
} from './tokens/tool-tokens.js';
