import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// The schema registry (contracts), the tool catalog and ajv-formats, which both hand their Ajv instance to, must load
// one ajv: ajv-formats builds its keywords with its own ajv's code generator, and two copies of ajv in the tree mean
// two compilers and two sets of classes. npm keeps the copy single only while nothing else claims the hoisted slot
// (the root package.json pins it; docs/decisions/0012-benches-outside-runtime-packages.md).
function ajvSeenFrom(packageJson: URL): string {
  return realpathSync(createRequire(packageJson).resolve('ajv/package.json'));
}

describe('ajv', () => {
  it('is one copy for contracts, catalog and ajv-formats', () => {
    const catalog = new URL('../package.json', import.meta.url);
    const contracts = new URL('../../contracts/package.json', import.meta.url);
    const formats = pathToFileURL(realpathSync(createRequire(catalog).resolve('ajv-formats/package.json')));
    const seen = new Set([ajvSeenFrom(catalog), ajvSeenFrom(contracts), ajvSeenFrom(formats)]);
    expect([...seen]).toHaveLength(1);
  });
});
