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
        results.push({ service, ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim().split('\n').at(-1) ?? '' });
      }
      c.print({ results }, () => results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'} ${r.output}`).join('\n'));
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    });
}
