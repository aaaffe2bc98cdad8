// The block device's own counters (/proc/diskstats) around a step of a benchmark: how many reads reached
// the device and how long each took there. A restart that reads its store from disk is slow either because
// it reads more or because each read is slower (the device still busy with what an earlier phase wrote);
// the wall time alone cannot tell the two apart. Linux only; the counters are the whole device's, so a
// step measured this way should run with nothing else reading or writing beside it.
import { readFileSync, statSync } from 'node:fs';

export interface DiskCounters {
  reads: number;
  readMs: number;
  writes: number;
  writeMs: number;
}

/** /proc/diskstats, a line's fields each (major, minor, name, then the counters). */
const diskstats = (): string[][] =>
  readFileSync('/proc/diskstats', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/));

/** The device holding `dir`, as /proc/diskstats names it, or null (not Linux, no such line). */
export function deviceOf(dir: string): string | null {
  if (process.platform !== 'linux') return null;
  const dev = statSync(dir).dev;
  // dev_t as glibc packs it: the major number's low 12 bits at 8–19, the minor's low 8 bits at 0–7.
  const major = Math.floor(dev / 256) & 0xfff;
  const minor = (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00);
  const line = diskstats().find((f) => Number(f[0]) === major && Number(f[1]) === minor);
  return line?.[2] ?? null;
}

/** The device's counters now (reads completed and ms spent on them, the same for writes), or null. */
export function diskCounters(device: string | null): DiskCounters | null {
  if (!device) return null;
  const f = diskstats().find((x) => x[2] === device);
  if (!f) return null;
  return { reads: Number(f[3]), readMs: Number(f[6]), writes: Number(f[7]), writeMs: Number(f[10]) };
}

/** What reached the device between two readings of its counters. */
export function diskSince(before: DiskCounters | null, after: DiskCounters | null): DiskCounters | null {
  if (!before || !after) return null;
  return {
    reads: after.reads - before.reads,
    readMs: after.readMs - before.readMs,
    writes: after.writes - before.writes,
    writeMs: after.writeMs - before.writeMs,
  };
}

/** "5,069 reads at 0.21 ms, 12 writes at 1.5 ms" for a bench row's note. */
export function describeDisk(d: DiskCounters | null): string {
  if (!d) return 'the device counters unread';
  const at = (n: number, ms: number): string => (n > 0 ? ` at ${(ms / n).toFixed(2)} ms` : '');
  return `${d.reads.toLocaleString('en-US')} device reads${at(d.reads, d.readMs)}, ${d.writes.toLocaleString('en-US')} writes${at(d.writes, d.writeMs)}`;
}
