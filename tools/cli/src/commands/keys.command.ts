import type { Command } from 'commander';
import type { ApiKeyListV1, ApiKeyViewV1, IssuedApiKeyV1, RevokedApiKeysV1 } from '@ormuz/contracts';
import type { UnansweredHint } from '@ormuz/service-kit/client';
import { CliInputError, identifier, type CliContext } from '../context.js';

/** Longest rotation overlap policy accepts: one year. */
const MAX_GRACE_SECONDS = 366 * 24 * 3600;

/** One key on one line: id, state, whose, label, and how long it works. */
export function keyLine(k: ApiKeyViewV1): string {
  const end = k.revoked_at
    ? `revoked ${k.revoked_at}`
    : k.expires_at
      ? `${k.state === 'expired' ? 'ended' : 'ends'} ${k.expires_at}${k.replaced_by ? ` (replaced by ${k.replaced_by})` : ''}`
      : 'no expiry';
  return `${k.key_id}  ${k.state.padEnd(7)}  ${k.tenant}/${k.agent_id}${k.label ? `  ${JSON.stringify(k.label)}` : ''}  created ${k.created_at}  ${end}`;
}

/** Issue and rotate: the key's line, then the key itself on a line of its own (easy to copy), with the warning. */
export function renderIssuedKey(r: IssuedApiKeyV1): string {
  return [
    keyLine(r.key),
    'API key, shown this once: only its hash is kept, so it cannot be shown again. Store it now.',
    r.api_key,
  ].join('\n');
}

export const renderKeyList = (r: ApiKeyListV1): string =>
  r.keys.length === 0 ? 'no API keys' : r.keys.map(keyLine).join('\n');

export const renderRevokedKeys = (r: RevokedApiKeysV1): string =>
  r.revoked.length === 0 ? 'nothing to revoke' : `revoked ${r.revoked.join(', ')}`;

/** `--grace`: a whole number of seconds from 0 to a year. */
export function graceSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > MAX_GRACE_SECONDS) {
    throw new CliInputError(`--grace must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}, not ${value}.`);
  }
  return n;
}

/** `--label`: 1 to 200 characters. */
export function keyLabel(value: string): string {
  if (value.length < 1 || value.length > 200) {
    throw new CliInputError(`--label must be 1 to 200 characters, not ${value.length}.`);
  }
  return value;
}

/**
 * What to say when issue or rotate gets no answer: a key may exist whose only copy was in the lost answer. It cannot
 * be shown again, so the safe course is to revoke what nobody holds and issue again.
 */
function unanswered(command: 'issue' | 'rotate', o: { tenant: string; agent: string }): UnansweredHint {
  return {
    what: `a new API key for agent ${o.agent}${command === 'rotate' ? " (and the end of the agent's other keys)" : ''}`,
    check:
      `Its key was in the lost answer and cannot be shown again: \`ormuz keys list --tenant ${o.tenant} --agent ${o.agent}\` ` +
      `shows whether it exists; revoke it (\`ormuz keys revoke --tenant ${o.tenant} --agent ${o.agent} --key <key-id>\`) ` +
      `and ${command} again.`,
  };
}

/**
 * `ormuz keys issue|rotate|revoke|list`: API keys for agents and programs, kept by policy. A key is printed once, when
 * it is issued or rotated in; only its hash is stored.
 */
export function registerKeysCommands(program: Command, ctx: () => CliContext): void {
  const keys = program
    .command('keys')
    .description("agents' API keys: issue, rotate, revoke, list (only hashes are stored)");

  keys
    .command('issue')
    .description('a new API key for an agent, beside any it has; printed once')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .option('--label <text>', 'what the key is for (shown in lists)', keyLabel)
    .action(async (o: { tenant: string; agent: string; label?: string }) => {
      const reply = await ctx().call(
        'policy.keys.issue',
        { tenant: o.tenant, agent_id: o.agent, ...(o.label ? { label: o.label } : {}) },
        { ifUnanswered: unanswered('issue', o) },
      );
      ctx().print(reply, renderIssuedKey);
    });

  keys
    .command('rotate')
    .description('a new API key for an agent; its other keys keep working until the grace period ends; printed once')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .option('--label <text>', 'what the new key is for (shown in lists)', keyLabel)
    .option('--grace <seconds>', 'how long the old keys keep working (default 3600; 0 ends them now)', graceSeconds)
    .action(async (o: { tenant: string; agent: string; label?: string; grace?: number }) => {
      const reply = await ctx().call(
        'policy.keys.rotate',
        {
          tenant: o.tenant,
          agent_id: o.agent,
          ...(o.label ? { label: o.label } : {}),
          ...(o.grace !== undefined ? { grace_seconds: o.grace } : {}),
        },
        { ifUnanswered: unanswered('rotate', o) },
      );
      ctx().print(reply, renderIssuedKey);
    });

  keys
    .command('revoke')
    .description("revoke one of an agent's API keys, or all of them; the next request with one is refused")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .option('--key <key-id>', 'the key to revoke (default: every key of the agent)', identifier('--key'))
    .action(async (o: { tenant: string; agent: string; key?: string }) => {
      const reply = await ctx().call('policy.keys.revoke', {
        tenant: o.tenant,
        agent_id: o.agent,
        ...(o.key ? { key_id: o.key } : {}),
      });
      ctx().print(reply, renderRevokedKeys);
    });

  keys
    .command('list')
    .description("a tenant's API keys, or one agent's, with their state (never the keys)")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--agent <id>', 'one agent only', identifier('--agent'))
    .action(async (o: { tenant: string; agent?: string }) => {
      const reply = await ctx().call('policy.keys.list', {
        tenant: o.tenant,
        ...(o.agent ? { agent_id: o.agent } : {}),
      });
      ctx().print(reply, renderKeyList);
    });
}
