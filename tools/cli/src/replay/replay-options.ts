/**
 * The options that say which part of a tenant's history a replay reads: bounds, context, call, agent, device and type
 * globs. Shared by `ormuz replay` and by the commands that query a live replay (`ormuz analyze`, `ormuz report`), so
 * the range reads the same everywhere.
 */
import type { Command } from 'commander';
import { identifier } from '../context.js';
import { CONTEXT_NAMES, type ReplayOptions } from './replay-query.js';

/** The option names {@link addReplayRangeOptions} adds, as commander stores them. */
export const REPLAY_RANGE_KEYS = [
  'from',
  'to',
  'context',
  'call',
  'agent',
  'device',
  'type',
] as const satisfies readonly (keyof ReplayOptions)[];

export function addReplayRangeOptions(command: Command): Command {
  return command
    .option('--from <bound>', 'start: a stream sequence (1234), an RFC 3339 time, or a duration ago (2h, 1d12h)')
    .option('--to <bound>', 'end (inclusive): a sequence, an RFC 3339 time, or a duration ago')
    .option('--context <name>', `one context (${CONTEXT_NAMES.join(', ')}); default every one the filters allow`)
    .option('--call <id>', "only this call's events", identifier('--call'))
    .option('--agent <id>', 'only the calls and conversations of this agent', identifier('--agent'))
    .option('--device <id>', 'only the calls, conversations and events of this device', identifier('--device'))
    .option('--type <glob...>', "only these CloudEvent types; globs take * and ? ('ormuz.toolcall.*')");
}
