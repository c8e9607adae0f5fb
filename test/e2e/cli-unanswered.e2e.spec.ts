/**
 * `ormuz call submit` when policy does not answer: the CLI must not leave the operator guessing whether the call was
 * recorded. Runs the built CLI against a namespace where no service listens; nothing else is started.
 */
import { join } from 'node:path';
import { randomNamespace, testEnv } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { exitWithin, killAll, ROOT, spawnTracked } from './support/processes.js';

describe('ormuz call submit without an answer', () => {
  const namespace = randomNamespace('cli_unanswered');
  afterAll(killAll);

  async function ormuz(...args: string[]) {
    const t = spawnTracked(process.execPath, [
      join(ROOT, 'tools/cli/bin/ormuz.js'),
      '--nats',
      testEnv().natsUrl,
      '--namespace',
      namespace,
      ...args,
    ]);
    const { code } = await exitWithin(t, 20_000, `ormuz ${args.join(' ')}`);
    return { code, stdout: t.stdout(), stderr: t.stderr() };
  }

  it('says this attempt was not received, names the call id, and how to find out', async () => {
    const callId = deriveCallId('acme', { kind: 'operation', operation_id: 'op-nobody' });
    const r = await ormuz(
      'call',
      'submit',
      '--tenant',
      'acme',
      '--tool',
      'device.screen_observe',
      '--operation-id',
      'op-nobody',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('so this attempt was not received');
    expect(r.stderr).toContain(`ormuz call status --tenant acme --call ${callId}`);
    expect(r.stderr).toContain('resubmit with the same operation id (op-nobody): it observes the original');
  });

  it('gives the same words and the code with --json', async () => {
    const r = await ormuz(
      '--json',
      'call',
      'submit',
      '--tenant',
      'acme',
      '--tool',
      'device.tap',
      '--operation-id',
      'op-json',
    );
    const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe('service_unavailable');
    expect(error.message).toContain(`--call ${deriveCallId('acme', { kind: 'operation', operation_id: 'op-json' })}`);
  });
});
