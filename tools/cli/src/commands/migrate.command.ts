import type { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import { SERVICES, serviceEntry } from '../services.js';
import type { CliContext } from '../context.js';

/** Runs every service's migrations (and stream declarations) by starting each with `migrate`. */
export function registerMigrateCommand(program: Command, ctx: () => CliContext): void {
  program
    .command('migrate')
    .description("apply every service's Postgres migrations and declare its streams, then exit")
    .action(() => {
      const c = ctx();
      const results: { service: string; ok: boolean; output: string }[] = [];
      for (const service of SERVICES) {
        const r = spawnSync(process.execPath, [serviceEntry(service), 'migrate'], {
          env: { ...process.env, NATS_URL: c.config.natsUrl, ORMUZ_NAMESPACE: c.config.namespace },
          encoding: 'utf8',
        });
        const ok = r.status === 0;
        // On success the service's own stdout line says what was done; start-up warnings go to stderr and must not
        // replace it. On failure the last stderr line is the reason.
        const output =
          lastLine(ok ? r.stdout : r.stderr) || lastLine(`${r.stdout}\n${r.stderr}`) || (r.error?.message ?? '');
        results.push({ service, ok, output });
      }
      c.print({ results }, () => results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'} ${r.output}`).join('\n'));
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    });
}

function lastLine(text: string | null | undefined): string {
  return (text ?? '').trim().split('\n').at(-1)?.trim() ?? '';
}
