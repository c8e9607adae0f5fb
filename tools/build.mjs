// Compiles every workspace's src/ to dist/ with SWC (decorator metadata included, which NestJS needs).
// Type-checking is separate (`npm run typecheck`); this step only emits JavaScript, so it takes a second or two.
import { transformFile } from '@swc/core';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const swcrc = JSON.parse(await readFile(join(root, '.swcrc'), 'utf8'));
delete swcrc.$schema;

async function* tsFiles(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(path);
    else if (/\.ts$/.test(entry.name) && !/\.(spec|fixtures|d)\.ts$/.test(entry.name)) yield path;
  }
}

async function buildPackage(pkgDir) {
  const src = join(pkgDir, 'src');
  const out = join(pkgDir, 'dist');
  await rm(out, { recursive: true, force: true });
  let count = 0;
  const jobs = [];
  for await (const file of tsFiles(src)) {
    const target = join(out, relative(src, file)).replace(/\.ts$/, '.js');
    jobs.push(
      transformFile(file, { ...swcrc, filename: file, sourceFileName: relative(dirname(target), file), swcrc: false }).then(
        async ({ code, map }) => {
          await mkdir(dirname(target), { recursive: true });
          await writeFile(target, `${code}\n//# sourceMappingURL=${target.split('/').pop()}.map\n`);
          if (map) await writeFile(`${target}.map`, map);
          count++;
        },
      ),
    );
  }
  await Promise.all(jobs);
  return count;
}

let total = 0;
for (const group of ['libs', 'services', 'tools']) {
  for (const name of await readdir(join(root, group))) {
    const pkgDir = join(root, group, name);
    try {
      await readdir(join(pkgDir, 'src'));
    } catch {
      continue;
    }
    total += await buildPackage(pkgDir);
  }
}
console.log(`build: ${total} files compiled`);
