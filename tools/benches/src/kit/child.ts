import { fork, type ChildProcess } from 'node:child_process';
import { now, sleep } from './stats.js';

/** Resolves once `predicate` holds, checking every 10 ms; throws naming `what` after `timeoutMs`. */
export async function until(what: string, predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = now() + timeoutMs;
  while (!predicate()) {
    if (now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Asks a forked child: sends `message` (when given) and resolves with the value of the oldest reply holding `key`;
 * rejects as soon as the child reports `{ failed }` or exits instead, or after `timeoutMs`.
 */
export type AskChild = <T>(key: string, message?: Record<string, unknown>, timeoutMs?: number) => Promise<T>;

/**
 * Forks `script` with `args` (stdio inherited, IPC). The child answers with objects of one key (`{ ready }`, ...) or
 * `{ failed }`; it is added to `children`, which the bench's cleanup kills whatever happens.
 */
export function forkChild(
  script: string,
  name: string,
  args: readonly string[],
  children: Set<ChildProcess>,
): AskChild {
  const child = fork(script, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const replies: Record<string, unknown>[] = [];
  let failure: string | undefined;
  child.on('message', (m: Record<string, unknown>) => {
    if ('failed' in m) failure = `the ${name} failed: ${String(m.failed)}`;
    else replies.push(m);
  });
  child.once('exit', (code, signal) => (failure ??= `the ${name} exited (${signal ?? `code ${code}`})`));
  return async <T>(key: string, message?: Record<string, unknown>, timeoutMs = 60_000): Promise<T> => {
    if (message) child.send(message);
    await until(`the ${name}'s ${key}`, () => failure !== undefined || replies.some((r) => key in r), timeoutMs);
    const i = replies.findIndex((r) => key in r);
    if (i < 0) throw new Error(failure);
    return replies.splice(i, 1)[0]![key] as T;
  };
}
