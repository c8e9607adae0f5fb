import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary directory for files a test hands to a command; `remove()` deletes it with everything in it. */
export interface ScratchFiles {
  /** Writes `content` (text as is, anything else as JSON) to `name` in the directory and returns its path. */
  write(name: string, content: unknown): string;
  remove(): void;
}

export function scratchFiles(prefix: string): ScratchFiles {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    write(name, content) {
      const path = join(dir, name);
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
