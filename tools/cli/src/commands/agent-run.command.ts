import type { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  assertValid,
  liveConversationSubject,
  MODEL_LOOP_TEXT_DELTA_V1,
  type ConversationViewV1,
  type LiveTextDeltaV1,
} from '@ormuz/contracts';
import { RemoteError } from '@ormuz/service-kit/client';
import { RunPrinter } from '../agent/run-printer.js';
import { RunSteps } from '../agent/run-steps.js';
import { CliInputError, identifier, type CliContext } from '../context.js';
import { modelSettingsOf, withModelSettingsOptions, type ModelSettingsOptions } from './agents.command.js';

/** How often the run reads the conversation while it runs, in ms. */
const READ_EVERY_MS = 150;

interface RunOptions extends ModelSettingsOptions {
  readonly tenant: string;
  readonly agent: string;
  readonly device?: string;
  readonly model?: string;
  readonly console?: string;
  readonly timeout: number;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 86_400) {
    throw new CliInputError(`--timeout must be a whole number of seconds from 1 to 86400, not ${value}.`);
  }
  return n;
}

/**
 * `ormuz agent run`: starts a conversation and prints its steps as they are recorded (model replies, each tool request
 * and what became of it, staged calls with where to decide them) until it completes or pauses for an owner; the exit
 * code says which (`RUN_EXIT`). With `--json`, one JSON object per step (`RunStep`). A streamed reply's text is
 * printed as it arrives (`text_delta` steps with `--json`), heard on the conversation's live subject, and the
 * recorded reply then completes it (`RunPrinter`).
 */
export function registerAgentRunCommand(program: Command, ctx: () => CliContext): void {
  const agent = program.command('agent').description('run an agent on a task and follow it');
  withModelSettingsOptions(
    agent
      .command('run <task>')
      .description(
        'start a conversation and print its steps until it ends (exit 0) or pauses for the owner (2); 3 failed, 4 stopped by a bound',
      )
      .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
      .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
      .option('--device <id>', 'the device the agent acts on (none: device tools are refused)', identifier('--device'))
      .option('--model <provider:model>', "the model (default: the agent's, `ormuz agents set`)")
      .option('--console <url>', "the approvals console's address, for links (default: $ORMUZ_API/console)")
      .option(
        '--timeout <seconds>',
        'give up following after this long (default 600); the conversation goes on',
        seconds,
        600,
      ),
  ).action(async (task: string, o: RunOptions) => {
    const c = ctx();
    const printer = new RunPrinter(Boolean(c.options.json), (text) => process.stdout.write(text));
    const settings = modelSettingsOf(o);
    const conversationId = `conv_${randomUUID().replaceAll('-', '')}`;
    // Heard from before the start, so that no text of the first reply is missed. A frame that is not one (or a
    // server that refuses the subscription) costs the live text only: the recorded steps are read below.
    const nc = await c.nc();
    const live = nc.subscribe(liveConversationSubject(c.config.namespace, o.tenant, conversationId), {
      callback: (err, msg) => {
        if (err) return;
        let frame: LiveTextDeltaV1;
        try {
          frame = assertValid<LiveTextDeltaV1>(MODEL_LOOP_TEXT_DELTA_V1, msg.json());
        } catch {
          return;
        }
        printer.frame(frame);
      },
    });
    await nc.flush();
    try {
      await followRun(c, o, task, conversationId, printer, settings);
    } finally {
      live.unsubscribe();
    }
  });
}

/** Starts the conversation and prints its recorded steps until it ends or pauses; sets the exit code. */
async function followRun(
  c: CliContext,
  o: RunOptions,
  task: string,
  conversationId: string,
  printer: RunPrinter,
  settings: ReturnType<typeof modelSettingsOf>,
): Promise<void> {
  await c.call(
    'model-loop.start',
    {
      tenant: o.tenant,
      agent_id: o.agent,
      task,
      device_id: o.device ?? null,
      conversation_id: conversationId,
      ...(o.model ? { model: o.model } : {}),
      ...(settings ? { model_settings: settings } : {}),
    },
    {
      ifUnanswered: {
        what: `conversation ${conversationId}`,
        check:
          `Read it (GET /v1/tenants/${o.tenant}/conversations/${conversationId}) to see whether it started; ` +
          'running the same command again starts another conversation.',
      },
    },
  );
  const api = process.env.ORMUZ_API?.replace(/\/+$/, '');
  const steps = new RunSteps(o.console ?? (api ? `${api}/console` : null));
  const deadline = Date.now() + o.timeout * 1000;
  let view: ConversationViewV1 | undefined;
  for (;;) {
    view = await c
      .call('model-loop.get', { tenant: o.tenant, conversation_id: conversationId }, 5000)
      .catch((err: unknown) => {
        // The read model may take a moment to show a conversation just started.
        if (err instanceof RemoteError && err.code === 'conversation_not_found') return undefined;
        throw err;
      });
    if (view) {
      const next = steps.next(view);
      if (steps.started()) {
        next.unshift({
          step: 'started',
          conversation_id: conversationId,
          model: view.model,
          agent_id: o.agent,
          device_id: o.device ?? null,
        });
      }
      printer.steps(next);
      const end = next.find((s) => s.step === 'end');
      if (end) {
        process.exitCode = end.exit_code;
        return;
      }
    }
    if (Date.now() > deadline) {
      throw new CliInputError(
        `conversation ${conversationId} is still running after ${o.timeout} s; it goes on without this command ` +
          '(read it with model-loop.get, or run again with a longer --timeout).',
      );
    }
    await delay(READ_EVERY_MS);
  }
}
