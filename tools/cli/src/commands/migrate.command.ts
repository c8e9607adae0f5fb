import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import { SERVICES, serviceEntry, serviceNatsEnv, type ServiceName } from '../services.js';
import type { CliContext } from '../context.js';

interface MigrateResult {
  readonly service: ServiceName;
  readonly ok: boolean;
  readonly output: string;
}

/**
 * Runs every service's migrations (and stream declarations) by starting each with `migrate`, all at once: each
 * service owns its own schema and streams, and the database's namespace check serialises itself. Under the NATS
 * authorization each runs as its own NATS user, from `NATS_<SERVICE>_PASSWORD` (see `serviceNatsEnv`).
 */
export function registerMigrateCommand(program: Command, ctx: () => CliContext): void {
  program
    .command('migrate')
    .description("apply every service's Postgres migrations and declare its streams, then exit")
    .action(async () => {
      const c = ctx();
      const env = { ...process.env, NATS_URL: c.config.natsUrl, ORMUZ_NAMESPACE: c.config.namespace };
      const results = await Promise.all(SERVICES.map((service) => migrate(service, env)));
      c.print({ results }, () => results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'} ${r.output}`).join('\n'));
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    });
}

function migrate(service: ServiceName, env: NodeJS.ProcessEnv): Promise<MigrateResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let credentials;
    try {
      credentials = serviceNatsEnv(service, env);
    } catch (err) {
      return resolve({ service, ok: false, output: `${service}: ${(err as Error).message}` });
    }
    const child = spawn(process.execPath, [serviceEntry(service), 'migrate'], {
      env: { ...env, ...credentials },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (err) => resolve({ service, ok: false, output: `${service}: ${err.message}` }));
    child.once('close', (code) => {
      const ok = code === 0;
      // On success the service's own stdout line says what was done; start-up warnings go to stderr and must not
      // replace it. On failure the last stderr line is the reason.
      const output = lastLine(ok ? stdout : stderr) || lastLine(`${stdout}\n${stderr}`) || `${service} exited ${code}`;
      resolve({ service, ok, output });
    });
  });
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim() ?? '';
}
