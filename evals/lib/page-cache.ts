// Drops a data folder's pages from the kernel's page cache, so a restart reads its store from disk whatever
// wrote it last. Without it a restart after a small fill finds the store cached and one after a large fill
// (whose index settling writes gigabytes) does not, and the two restarts compare the cache, not the store.
// The same for the program's files (the 3M fill's I/O pushed them out of the cache, so only that size's
// first restart faulted node's and the packages' code back in from disk), and the reverse, a folder read
// through so a step finds it cached. Per file with `dd iflag=nocache count=0` (GNU coreutils:
// posix_fadvise DONTNEED over the whole file), so no root is needed and nothing else on the machine loses
// its cache.
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [],
  );
}

/** Each file's pages dropped, or why not (no GNU dd). */
function dropFiles(files: readonly string[]): { files: number } | { skipped: string } {
  for (const file of files) {
    const dd = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
    if (dd.status !== 0) return { skipped: `dd iflag=nocache failed on ${file}: ${String(dd.stderr).trim() || dd.error?.message}` };
  }
  return { files: files.length };
}

/** Files whose pages were dropped, or why none were (not Linux, no GNU dd). Dirty pages are written first. */
export function dropFromPageCache(dir: string): { files: number } | { skipped: string } {
  if (process.platform !== 'linux') return { skipped: `not Linux (${process.platform})` };
  const synced = spawnSync('sync', ['-f', dir]);
  if (synced.status !== 0) return { skipped: `sync -f failed: ${String(synced.stderr).trim() || synced.error?.message}` };
  return dropFiles(filesUnder(dir));
}

/**
 * The pages of those of `files` that are in the page cache dropped (the program's files: node, the build
 * and the packages are ~21,000 files, of which a start reads a few hundred).
 */
export function dropResidentFromPageCache(files: readonly string[]): { files: number } | { skipped: string } {
  const resident = residentBytes(files);
  if (!resident) return { skipped: 'fincore unavailable' };
  return dropFiles([...resident].filter(([, bytes]) => bytes > 0).map(([file]) => file));
}

/** Every file under `dir` read through once, so its pages are in the page cache. */
export function readThrough(dir: string): number {
  const buffer = Buffer.alloc(8 << 20);
  let bytes = 0;
  for (const file of filesUnder(dir)) {
    const fd = openSync(file, 'r');
    try {
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) bytes += n;
    } finally {
      closeSync(fd);
    }
  }
  return bytes;
}

/**
 * Bytes of each file resident in the page cache (util-linux `fincore`), or null when it cannot be read.
 * Two readings around a step tell which files the step read from disk.
 */
export function residentBytes(files: readonly string[]): Map<string, number> | null {
  if (process.platform !== 'linux') return null;
  const out = new Map<string, number>();
  for (let i = 0; i < files.length; i += 2000) {
    const run = spawnSync('fincore', ['--bytes', '--noheadings', '--raw', '--output', 'RES,FILE', ...files.slice(i, i + 2000)], {
      maxBuffer: 64 << 20,
    });
    // A file removed meanwhile makes fincore complain and go on; only a missing fincore fails the reading.
    if (run.error) return null;
    for (const line of String(run.stdout).split('\n')) {
      const at = line.indexOf(' ');
      if (at > 0) out.set(line.slice(at + 1), Number(line.slice(0, at)));
    }
  }
  return out;
}

/** MB that came into the page cache between two readings, summed by `group` (the file's kind). */
export function readInto(
  before: Map<string, number> | null,
  after: Map<string, number> | null,
  group: (file: string) => string,
): [string, number][] | null {
  if (!before || !after) return null;
  const sums = new Map<string, number>();
  for (const [file, bytes] of after) {
    const grew = bytes - (before.get(file) ?? 0);
    if (grew > 0) sums.set(group(file), (sums.get(group(file)) ?? 0) + grew / 1048576);
  }
  return [...sums].sort((a, b) => b[1] - a[1]);
}
