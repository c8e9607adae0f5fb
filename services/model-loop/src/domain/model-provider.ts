/**
 * The seam between the loop and a model (steps 1–2 of tool calling): the loop sends the conversation, the model
 * answers with text and/or tool requests. A request is only a request; the loop decides what happens to it.
 *
 * Providers: `scripted:*` (deterministic scripts for demos and tests), and the HTTP adapters in `providers/`
 * (`openai:*`, `openai-compatible:*`, `openai-responses:*`, `anthropic:*`). Each adapter owns everything API-specific: parsing argument
 * JSON, rendering tool names of earlier turns (recorded canonical) the way the API was shown them, and rendering a
 * tool message that answers a call from an earlier turn (the final outcome of a call that was pending confirmation)
 * in the form the API accepts.
 *
 * Each provider declares a profile per model: its tier and schema budget decide which tool schemas a turn is sent
 * (see `@ormuz/tool-payload`), and a provider whose API forbids dots in function names asks for encoded names; the loop
 * then encodes what it offers and decodes what the model asks for, so everything recorded is canonical.
 */
import type {
  ConversationMessageV1,
  JsonValue,
  ModelSettingsV1,
  ModelStopReasonV1,
  TokenUsageV1,
} from '@ormuz/contracts';
import type { TokenFamily } from '@ormuz/tool-payload';

/** How many tool schemas a model can take in, and how it wants their names. */
export interface ModelProfile {
  /**
   * `large`: every offered tool's full schema is sent. `small`: the core `ormuz.*` tools, the tools activated in the
   * conversation, pinned tools and a few tools relevant to the turn are sent in full; the rest are listed by name.
   */
  readonly tier: 'large' | 'small';
  /**
   * Tokens, in the model's own tokens (see `tokenFamily`), of tool schemas a `small` model is sent beyond the ones it
   * always gets (core, activated, pinned); relevant tools are added while they fit. Ignored for `large`.
   */
  readonly schemaBudgetTokens: number;
  /**
   * How the model counts tokens, when its name does not tell (a fine-tune served under a name of its own); by
   * default `tokenFamilyOf(model)` of `@ormuz/tool-payload`.
   */
  readonly tokenFamily?: TokenFamily;
  /** True when the API forbids dots in function names: tools are offered as `device__tap`, see `providerFunctionName`. */
  readonly encodeToolNames: boolean;
}

/** The profile a provider gets when it declares nothing more specific: a large model with dotted names. */
export const LARGE_MODEL: ModelProfile = Object.freeze({
  tier: 'large',
  schemaBudgetTokens: 100_000,
  encodeToolNames: false,
});

/** A tool as offered to the model: name (encoded when the provider asks), description and argument schema. */
export interface ToolOffer {
  /** The canonical name, or its `providerFunctionName` encoding when the profile says `encodeToolNames`. */
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments the model may send. */
  readonly parameters: { readonly [key: string]: JsonValue };
}

/** One model turn's input. */
export interface ModelRequest {
  /** `<provider>:<model>`, as recorded when the conversation started. */
  readonly model: string;
  /** The conversation this turn belongs to (for a provider's logs and caches; never sent as model input). */
  readonly conversation_id: string;
  /** 0-based model turn being asked for. */
  readonly turn: number;
  /** Standing instructions from the runtime (how to read tool results, what pending confirmations mean). */
  readonly system: string;
  /** The whole conversation so far, in log order; tool contents are fenced, untrusted data. */
  readonly messages: readonly ConversationMessageV1[];
  /**
   * Tools offered in full this turn, fitted to the model's tier. Offering is not granting: policy checks every
   * request regardless, and a tool the agent may not use is never offered.
   */
  readonly tools: readonly ToolOffer[];
  /**
   * Names (as the model is shown them) of the further tools the agent may use but whose schemas were left out to fit
   * a small model; `system` says how to search and activate them. Empty for a large model.
   */
  readonly directory: readonly string[];
  /**
   * Where the model is reached when not only by the provider's configuration (recorded at the conversation's start):
   * base URL, the variable or file holding the key (read at this call), output bound, streaming.
   */
  readonly settings?: ModelSettingsV1;
  /** Aborted when the loop gives up on the turn (shutdown, deadline). */
  readonly signal?: AbortSignal;
  /**
   * Called with each piece of the reply's text as a streaming provider receives it, for a live view, with the
   * transport's try it belongs to (from 1). The reply is still returned only once complete; a provider that does not
   * stream never calls it. A try the transport retries (a stream cut off, say) streams its text again from the start,
   * with the next `attempt`.
   */
  readonly onText?: (delta: string, attempt: number) => void;
}

/** A tool request as the model made it; the runtime issues its call id, never the model. */
export interface ModelToolRequest {
  readonly name: string;
  /** Parsed arguments. Adapters turn unparsable argument text into an error for the model, not into `{}`. */
  readonly arguments: { readonly [key: string]: JsonValue };
  /**
   * Set when the request cannot be run as made: its argument text is not a JSON object, it names a tool it was not
   * offered, it exceeds the provider's bound on requests per turn, or the output limit cut it short. The sentence
   * says which, for the model; the loop records it as the request's `rejected` result and never submits it.
   */
  readonly invalid?: string;
}

/** One model turn's output. */
export interface ModelReply {
  /** Text for the user; may be empty when the reply only requests tools. */
  readonly content: string;
  readonly tool_calls: readonly ModelToolRequest[];
  readonly usage: TokenUsageV1;
  /** Why the model stopped, when its provider says; recorded with the reply. */
  readonly stop_reason?: ModelStopReasonV1;
}

/** A source of model replies for the models it serves. */
export interface ModelProvider {
  /** True when this provider serves `model` (`<provider>:<model>`) reached with `settings` (default: as configured). */
  supports(model: string, settings?: ModelSettingsV1): boolean;
  /** Model names worth listing in an `unknown_model` error. */
  readonly examples: readonly string[];
  /** The tier, schema budget and naming needs of `model` (one this provider supports). */
  profile(model: string): ModelProfile;
  /**
   * Produces the reply for one turn. Throws ModelUnavailableError when the model cannot answer (network, rate
   * limit, malformed response); the loop retries a bounded number of times, then completes the conversation as failed.
   */
  complete(request: ModelRequest): Promise<ModelReply>;
}

/** Picks the provider for a model name. */
export class ModelProviders {
  constructor(private readonly providers: readonly ModelProvider[]) {}

  /** The provider serving `model` with `settings`, or undefined. */
  for(model: string, settings?: ModelSettingsV1): ModelProvider | undefined {
    return this.providers.find((p) => p.supports(model, settings));
  }

  /** Every listed model name, for error messages. */
  examples(): string[] {
    return this.providers.flatMap((p) => [...p.examples]);
  }
}

/** Standing instructions sent with every model turn (kept with the payload they are counted in). */
export { LOOP_INSTRUCTIONS } from '@ormuz/tool-payload';
