// Drops a data folder's pages from the kernel's page cache, so a restart reads its store from disk whatever
// wrote it last. Without it a restart after a small fill finds the store cached and one after a large fill
// (whose index settling writes gigabytes) does not, and the two restarts compare the cache, not the store.
// Per file with `dd iflag=nocache count=0` (GNU coreutils: posix_fadvise DONTNEED over the whole file), so
// no root is needed and nothing else on the machine loses its cache.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [],
  );
}

/** Files whose pages were dropped, or why none were (not Linux, no GNU dd). Dirty pages are written first. */
export function dropFromPageCache(dir: string): { files: number } | { skipped: string } {
  if (process.platform !== 'linux') return { skipped: `not Linux (${process.platform})` };
  const synced = spawnSync('sync', ['-f', dir]);
  if (synced.status !== 0) return { skipped: `sync -f failed: ${String(synced.stderr).trim() || synced.error?.message}` };
  const files = filesUnder(dir);
  for (const file of files) {
    const dd = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
    if (dd.status !== 0) return { skipped: `dd iflag=nocache failed on ${file}: ${String(dd.stderr).trim() || dd.error?.message}` };
  }
  return { files: files.length };
}
