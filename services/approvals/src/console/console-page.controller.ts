import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { ConsoleOidc } from './console-oidc.js';

/**
 * The page's files: plain HTML, CSS and JavaScript, no build step. They live in `src/console/public/` and are read
 * from there, resolved from the package root (two folders up from this module in `src/console/` and in
 * `dist/console/` alike), because the build compiles only TypeScript into `dist/`.
 */
export const PUBLIC_DIR = fileURLToPath(new URL('../../src/console/public/', import.meta.url));

/** The files served, by name: nothing else under the folder is reachable, so no path can walk out of it. */
const FILES: Readonly<Record<string, string>> = Object.freeze({
  'index.html': 'text/html; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'sse.js': 'text/javascript; charset=utf-8',
  'timeline.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'webhooks.js': 'text/javascript; charset=utf-8',
  'webhooks.css': 'text/css; charset=utf-8',
  'oidc.js': 'text/javascript; charset=utf-8',
});

/**
 * Only this origin's own files run, and nothing is framed: even a value that escaped escaping could not run a script
 * or send data elsewhere. `connect-src 'self'`: the page talks to this service only, and, where the console signs in
 * through the identity provider, to the provider's token endpoint.
 */
const contentSecurityPolicy = (connect: readonly string[]) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    ["connect-src 'self'", ...connect].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

/** `GET /console`: the owners' approvals console. */
@Controller('console')
export class ConsolePageController {
  constructor(private readonly oidc: ConsoleOidc) {}

  @Get()
  page(@Res() res: ServerResponse) {
    return this.send(res, 'index.html');
  }

  @Get(':file')
  file(@Param('file') file: string, @Res() res: ServerResponse) {
    if (!Object.hasOwn(FILES, file)) throw new NotFoundException(`The console has no file ${file}.`);
    return this.send(res, file);
  }

  private async send(res: ServerResponse, file: string): Promise<void> {
    const body = await readFile(PUBLIC_DIR + file);
    res.writeHead(200, {
      'content-type': FILES[file],
      'content-length': body.length,
      'content-security-policy': contentSecurityPolicy(await this.oidc.connectSources()),
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      // Revalidated on every load, so a page never runs with an older script than the service's.
      'cache-control': 'no-cache',
    });
    res.end(body);
  }
}
