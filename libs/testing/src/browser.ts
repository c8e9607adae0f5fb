/**
 * A headless browser for tests of the web console: Debian's Chromium (apt), driven by playwright-core, started the way
 * every console test needs it. playwright-core is loaded on the first launch, so tests without a browser never pay
 * for it.
 */
import type { Browser } from 'playwright-core';

/** The Chromium binary: `CHROMIUM_PATH`, else Debian's. */
export function chromiumPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/**
 * Launches headless Chromium ({@link chromiumPath}) without a sandbox (tests run as users Chromium's sandbox may
 * refuse), without a GPU, and without the background traffic (updates, sync, component downloads) that a test machine
 * has no network for. Close it in `afterAll`.
 *
 * @throws playwright's error, naming the path, when the binary is missing (`apt-get install chromium`).
 */
export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
