#!/usr/bin/env node
// The CLI is compiled by `npm run build`; this shim keeps `npx ormuz` working from the repository root.
import { existsSync } from 'node:fs';
const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('ormuz: the CLI is not built yet. Run `npm run build` at the repository root, then try again.');
  process.exit(2);
}
await import(entry.href);
