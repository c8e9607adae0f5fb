/**
 * Model-loop's metrics, all declared here (served as `GET /metrics` on the probes' port, decision 0030), labelled by
 * the model's provider (`scripted`, `openai`, `openai-responses`, `anthropic`, `openai-compatible`), never by model
 * name, agent or conversation:
 *
 * - `ormuz_model_tokens_total{provider, direction}`: tokens the providers reported, `input` and `output`;
 * - `ormuz_model_errors_total{provider}`: model turns that failed (no answer, an error, an empty reply), each attempt;
 * - `ormuz_model_reply_seconds{provider}`: how long a model took to answer a turn (its retries included).
 */
import type { TokenUsageV1 } from '@ormuz/contracts';
import { type Counter, type Histogram, type ServiceMetrics } from '@ormuz/service-kit';

/** The provider part of a model name (`<provider>:<model>`); `unknown` for a name without one. */
export function providerOf(model: string): string {
  const colon = model.indexOf(':');
  return colon > 0 ? model.slice(0, colon) : 'unknown';
}

/** Model replies take seconds to minutes. */
const REPLY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

export class ModelLoopMetrics {
  private readonly tokens: Counter<'provider' | 'direction'>;
  private readonly errors: Counter<'provider'>;
  private readonly replies: Histogram<'provider'>;

  constructor(metrics: ServiceMetrics) {
    this.tokens = metrics.counter({
      name: 'ormuz_model_tokens_total',
      help: 'Tokens the model providers reported, input and output.',
      labelNames: ['provider', 'direction'] as const,
    });
    this.errors = metrics.counter({
      name: 'ormuz_model_errors_total',
      help: 'Model turns that failed (no answer, an error, an empty reply), each attempt.',
      labelNames: ['provider'] as const,
    });
    this.replies = metrics.histogram({
      name: 'ormuz_model_reply_seconds',
      help: 'Time a model took to answer a turn, retries included.',
      labelNames: ['provider'] as const,
      buckets: REPLY_BUCKETS,
    });
  }

  /** `model` answered after `seconds` with `usage`. */
  answered(model: string, usage: TokenUsageV1, seconds: number): void {
    const provider = providerOf(model);
    this.tokens.inc({ provider, direction: 'input' }, usage.input_tokens);
    this.tokens.inc({ provider, direction: 'output' }, usage.output_tokens);
    this.replies.observe({ provider }, seconds);
  }

  /** A turn of `model` failed. */
  failed(model: string): void {
    this.errors.inc({ provider: providerOf(model) });
  }
}
