/**
 * The supervisor with real child processes (short `node -e` scripts standing in for services): exits are reported
 * and restarted with backoff, a bounded number of times, with the pinned environment; nothing restarts after stop.
 */
import { spawn } from 'node:child_process';
import { waitFor } from '@ormuz/testing';
import type { ServiceName, ServiceProcess } from '../services.js';
import { defaultBackoffMs, ServiceSupervisor } from './supervisor.js';

/** A stand-in service: a node process running `script`, with the env it was given. */
function fakeService(name: ServiceName, script: string, env: NodeJS.ProcessEnv = {}): ServiceProcess {
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, ...env }, stdio: 'ignore' });
  const proc: ServiceProcess = { name, child, logFile: `/logs/${name}.log`, exited: false };
  child.once('exit', () => {
    proc.exited = true;
  });
  return proc;
}

describe('ServiceSupervisor', () => {
  const started: ServiceProcess[] = [];
  afterEach(() => {
    for (const p of started.splice(0)) if (!p.exited) p.child.kill('SIGKILL');
  });

  it('reports an exit and restarts the service with its pinned env, at most maxRestarts times', async () => {
    const lines: string[] = [];
    const envs: NodeJS.ProcessEnv[] = [];
    const supervisor = new ServiceSupervisor({
      spawn: (name, env) => {
        envs.push(env);
        const p = fakeService(name, 'process.exit(3)', env);
        started.push(p);
        return p;
      },
      waitHealthy: async (proc) => ({ service: proc.name, pid: proc.child.pid ?? 0, endpoints: {} }),
      report: (line) => lines.push(line),
      maxRestarts: 2,
      backoffMs: () => 5,
    });
    const first = fakeService('approvals', 'process.exit(3)');
    started.push(first);
    supervisor.watch(first, { APPROVALS_PORT: '18081' });

    await waitFor(() => lines.some((l) => l.includes('not restarting')), { message: 'the supervisor to give up' });
    expect(supervisor.restartsOf('approvals')).toBe(2);
    expect(envs).toEqual([{ APPROVALS_PORT: '18081' }, { APPROVALS_PORT: '18081' }]);
    const exits = lines.filter((l) => l.startsWith('approvals exited with code 3'));
    expect(exits[0]).toContain('restarting it in 5 ms (restart 1 of 2). Its log: /logs/approvals.log');
    expect(exits[1]).toContain('(restart 2 of 2)');
    expect(exits[2]).toContain('not restarting it: it was restarted 2 times already. Its log: /logs/approvals.log');
    supervisor.stop();
  });

  it('says a killed service was killed, and that it is back once it answers', async () => {
    const lines: string[] = [];
    const supervisor = new ServiceSupervisor({
      spawn: (name) => {
        const p = fakeService(name, 'setInterval(() => {}, 1000)');
        started.push(p);
        return p;
      },
      waitHealthy: async (proc) => ({ service: proc.name, pid: 4242, endpoints: {} }),
      report: (line) => lines.push(line),
      backoffMs: () => 5,
    });
    const first = fakeService('device-bridge', 'setInterval(() => {}, 1000)');
    started.push(first);
    supervisor.watch(first);
    first.child.kill('SIGKILL');
    await waitFor(() => lines.includes('device-bridge is back (pid 4242)'), { message: 'the restart to be reported' });
    expect(lines[0]).toMatch(/^device-bridge was killed \(SIGKILL\); restarting it in 5 ms \(restart 1 of 5\)/);
    const [now] = supervisor.stop();
    expect(now).not.toBe(first);
    expect(now?.exited).toBe(false);
  });

  it('restarts nothing once stopped', async () => {
    const lines: string[] = [];
    let spawned = 0;
    const supervisor = new ServiceSupervisor({
      spawn: (name) => {
        spawned++;
        return fakeService(name, 'process.exit(0)');
      },
      waitHealthy: async (proc) => ({ service: proc.name, pid: 1, endpoints: {} }),
      report: (line) => lines.push(line),
      backoffMs: () => 5,
    });
    const p = fakeService('audit', 'setInterval(() => {}, 1000)');
    started.push(p);
    supervisor.watch(p);
    supervisor.stop();
    const gone = new Promise((resolve) => p.child.once('exit', resolve));
    p.child.kill('SIGTERM');
    await gone;
    expect(lines).toEqual([]);
    expect(spawned).toBe(0);
  });

  it('backs off 0.5 s, doubling, up to 8 s', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map(defaultBackoffMs)).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
  });
});
