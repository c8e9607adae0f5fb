import { progress } from './report.js';

/** `--<name>=value` or `--<name> value` from the command line, or undefined. */
export function option(name: string, argv: readonly string[] = process.argv): string | undefined {
  const prefix = `--${name}=`;
  const at = argv.indexOf(`--${name}`);
  if (at >= 0 && argv[at + 1] !== undefined && !argv[at + 1]!.startsWith('--')) return argv[at + 1];
  return argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

/** Whether the bare flag `--<name>` is on the command line. */
export const flag = (name: string, argv: readonly string[] = process.argv): boolean => argv.includes(`--${name}`);

/** NATS_URL, default nats://127.0.0.1:4222. */
export const natsUrl = (env: NodeJS.ProcessEnv = process.env): string => env.NATS_URL || 'nats://127.0.0.1:4222';

/** Resolves with `p`, or after `ms` regardless (a teardown step must never hang the run). */
export async function bounded(what: string, p: Promise<unknown>, ms = 5000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      progress(`cleanup: ${what} did not finish within ${ms} ms; moving on`);
      resolve();
    }, ms);
  });
  await Promise.race([
    p.then(
      () => undefined,
      () => undefined,
    ),
    late,
  ]);
  clearTimeout(timer);
}

/** On SIGINT or SIGTERM (once each): runs `cleanup`, then exits with 130. */
export function cleanUpOnSignals(cleanup: () => Promise<void>): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      progress(`${sig}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}

/**
 * After `ms`, runs `cleanup` and exits with 1. The timer is unref'd (it never keeps the process alive); clear it
 * with `clearTimeout` when the run ends in time.
 */
export function startWatchdog(ms: number, cleanup: () => Promise<void>): NodeJS.Timeout {
  const watchdog = setTimeout(() => {
    progress(`watchdog: run exceeded ${ms / 1000} s; cleaning up`);
    void cleanup().finally(() => process.exit(1));
  }, ms);
  watchdog.unref();
  return watchdog;
}

/** `--<name>=value` or `--<name> value` as a positive number, `fallback` when absent; throws when it is not one. */
export function positiveOption(name: string, fallback: number, argv: readonly string[] = process.argv): number {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const given = i < 0 ? undefined : argv[i] === `--${name}` ? argv[i + 1] : argv[i]!.slice(name.length + 3);
  if (i >= 0 && (given === undefined || given.startsWith('--'))) throw new Error(`--${name} needs a value`);
  const v = given === undefined ? fallback : Number(given);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}
