/**
 * `ormuz agent run`'s view of a conversation: the steps that appeared since the last read of `model-loop.get`, as
 * objects with stable field names (printed one per line with `--json`, documented in the README), how each reads for
 * a person, and the exit code a run ends with.
 */
import type { CompletionReasonV1, ConversationViewV1 } from '@ormuz/contracts';

/** One step of a run. `step` names the kind; the fields of each kind are fixed. */
export type RunStep =
  | {
      readonly step: 'started';
      readonly conversation_id: string;
      readonly model: string;
      readonly agent_id: string;
      readonly device_id: string | null;
    }
  /** A model reply: its text (may be empty) and each tool it asks for, with the call id the runtime gave it. */
  | {
      readonly step: 'model';
      readonly turn: number;
      readonly text: string;
      readonly tool_requests: readonly {
        readonly call_id: string;
        readonly tool: string;
        readonly arguments: unknown;
      }[];
    }
  /**
   * What became of one tool request: `status` is the result the model was shown (`succeeded`, `failed`,
   * `outcome_unknown`, `refused`, `rejected`, `denied`, `expired`, `pending_confirmation`, …), `content` the fenced text.
   */
  | {
      readonly step: 'tool_result';
      readonly turn: number;
      readonly call_id: string;
      readonly tool: string;
      readonly status: string;
      readonly content: string;
    }
  /** A staged call waiting for its owner, with where to decide it (null when no console address is known). */
  | {
      readonly step: 'pending_approval';
      readonly call_id: string;
      readonly approval_id: string;
      readonly summary: string;
      readonly console_url: string | null;
    }
  /** The run's last line: where the conversation stands and the exit code the CLI ends with. */
  | {
      readonly step: 'end';
      readonly status: 'completed' | 'paused';
      readonly completion_reason: CompletionReasonV1 | null;
      readonly final_text: string | null;
      readonly exit_code: number;
    };

/**
 * Exit codes of `ormuz agent run`: 0 answered; 2 paused, waiting for an owner's decision; 3 failed (the model did not
 * answer); 4 stopped by a bound (steps, tool calls, tokens, wall time, cost). 1 stays every other error (bad input, no
 * answer from the platform), as for every command.
 */
export const RUN_EXIT = Object.freeze({ answered: 0, paused: 2, failed: 3, bounded: 4 });

/** The exit code for a conversation that has stopped (completed or paused). */
export function exitCodeOf(view: Pick<ConversationViewV1, 'status' | 'completion_reason'>): number {
  if (view.status === 'paused') return RUN_EXIT.paused;
  if (view.completion_reason === 'answered') return RUN_EXIT.answered;
  if (view.completion_reason === 'failed') return RUN_EXIT.failed;
  return RUN_EXIT.bounded;
}

/** Remembers what was shown, so that each read yields only what is new. */
export class RunSteps {
  private messagesShown = 1; // the task, which the run was started with
  private readonly approvalsShown = new Set<string>();
  private announced = false;

  constructor(
    /** The console's address (`<approvals URL>/console`), for links to a staged call; null when unknown. */
    private readonly consoleUrl: string | null,
  ) {}

  /** True the first time it is asked: the moment to say the conversation started. */
  started(): boolean {
    if (this.announced) return false;
    this.announced = true;
    return true;
  }

  /** The steps of `view` not yet returned, in log order; with `end` once the conversation completed or paused. */
  next(view: ConversationViewV1): RunStep[] {
    const steps: RunStep[] = [];
    const tools = new Map<string, string>();
    for (const m of view.messages) for (const t of m.tool_calls ?? []) tools.set(t.call_id, t.name);
    for (const m of view.messages.slice(this.messagesShown)) {
      if (m.role === 'assistant') {
        steps.push({
          step: 'model',
          turn: m.turn,
          text: m.content,
          tool_requests: (m.tool_calls ?? []).map((t) => ({
            call_id: t.call_id,
            tool: t.name,
            arguments: t.arguments,
          })),
        });
      } else if (m.role === 'tool') {
        const callId = m.tool_call_id ?? m.provenance?.call_id ?? '';
        steps.push({
          step: 'tool_result',
          turn: m.turn,
          call_id: callId,
          tool: m.provenance?.tool ?? tools.get(callId) ?? '',
          status: m.provenance?.status ?? 'unknown',
          content: m.content,
        });
        // Right after the result that told the model, when the pending list has not shown it yet.
        const approval = m.provenance?.approval;
        if (approval) steps.push(...this.pendingStep({ call_id: callId, ...approval }));
      }
    }
    this.messagesShown = Math.max(this.messagesShown, view.messages.length);
    for (const p of view.pending) steps.push(...this.pendingStep(p));
    if (view.status !== 'running') {
      steps.push({
        step: 'end',
        status: view.status,
        completion_reason: view.completion_reason,
        final_text: view.final_text,
        exit_code: exitCodeOf(view),
      });
    }
    return steps;
  }

  /** The step for a staged call, once per approval. */
  private pendingStep(p: { call_id: string; approval_id: string; summary: string }): RunStep[] {
    if (this.approvalsShown.has(p.approval_id)) return [];
    this.approvalsShown.add(p.approval_id);
    return [
      {
        step: 'pending_approval',
        call_id: p.call_id,
        approval_id: p.approval_id,
        summary: p.summary,
        console_url: this.consoleUrl ? `${this.consoleUrl}#/calls/${encodeURIComponent(p.call_id)}` : null,
      },
    ];
  }
}

/** How a step reads for a person: one or more lines. */
export function renderStep(s: RunStep): string {
  switch (s.step) {
    case 'started':
      return `conversation ${s.conversation_id} started: agent ${s.agent_id} on ${s.model}${s.device_id ? `, device ${s.device_id}` : ''}`;
    case 'model': {
      const lines = s.text.trim() === '' ? [] : [`model: ${s.text}`];
      for (const r of s.tool_requests)
        lines.push(`model asks ${r.tool} ${JSON.stringify(r.arguments)} → call ${r.call_id}`);
      return lines.join('\n');
    }
    case 'tool_result':
      return `  ${s.tool} (${s.call_id}): ${s.status}`;
    case 'pending_approval':
      return (
        `  waiting for the owner: ${s.summary}\n  approval ${s.approval_id}` +
        (s.console_url ? `, decide it in the console: ${s.console_url}` : `: ormuz approvals approve ${s.approval_id}`)
      );
    case 'end':
      if (s.status === 'paused') return `paused: waiting for the owner's decision (exit ${s.exit_code})`;
      return `${s.completion_reason === 'answered' ? 'answer' : `stopped (${s.completion_reason})`}: ${s.final_text ?? ''}`;
    default:
      return assertNever(s);
  }
}

function assertNever(value: never): never {
  throw new Error(`unhandled step ${JSON.stringify(value)}`);
}
