// jest `globalTeardown` for the integration and e2e projects: drops this project's reference to the test servers;
// the last one stops the containers global-setup.ts started, if any. Imports nothing relative (see global-setup.ts).
interface TestServers {
  refs: number;
  stop: () => Promise<void>;
}
const state = globalThis as typeof globalThis & { __ormuzTestServers?: TestServers };

export default async function globalTeardown(): Promise<void> {
  const running = state.__ormuzTestServers;
  if (!running || --running.refs > 0) return;
  state.__ormuzTestServers = undefined;
  await running.stop();
}
