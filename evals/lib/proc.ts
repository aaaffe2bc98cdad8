// What a benchmark reads about a server process from /proc (Linux only): its resident memory, the CPU
// it has used, and when it has gone quiet (LanceDB keeps building indexes long after the last write).
import { readdirSync, readFileSync } from 'node:fs';

/** Resident set size in MB (VmRSS); NaN when the process is gone. */
export function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The fields of a `stat` file after the command's name (which may hold spaces): [0] is the state. */
function statFields(path: string): string[] {
  return readFileSync(path, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
}

/** User + system CPU seconds the process has used (/proc/<pid>/stat, clock ticks of 1/100 s). */
export function cpuSeconds(pid: number | undefined): number {
  const fields = statFields(`/proc/${pid}/stat`);
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The processes whose parent is `pid` (the server's index work in child processes). */
export function childPids(pid: number | undefined): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(`/proc/${entry}/stat`)[1]) === pid) out.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/**
 * CPU seconds of the process and its children: those still running, and (counted by the kernel in the
 * parent's own stat once it has waited for them) those ended.
 */
export function treeCpuSeconds(pid: number | undefined): number {
  const fields = statFields(`/proc/${pid}/stat`);
  let ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  for (const child of childPids(pid)) {
    try {
      const f = statFields(`/proc/${child}/stat`);
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // ended meanwhile: its ticks reach the parent's once it is waited for
    }
  }
  return ticks / 100;
}

/**
 * Waits until the process and its children (the index builds it starts) have used less than 0.05 CPU s
 * in each 0.5 s for `quietMs`, or `maxMs` has passed. Returns the seconds they stayed busy, the CPU
 * seconds they used meanwhile, the process's RSS at the start and at its peak, and its children's peak
 * (summed at each sample).
 */
export async function untilQuiet(
  pid: number | undefined,
  { quietMs = 3000, maxMs = 300_000 }: { quietMs?: number; maxMs?: number } = {},
): Promise<{
  busySeconds: number;
  cpuSeconds: number;
  quiet: boolean;
  startRssMb: number;
  peakRssMb: number;
  childrenPeakRssMb: number;
}> {
  const start = performance.now();
  const cpu0 = treeCpuSeconds(pid);
  let cpu = cpu0;
  let quietSince = start;
  const startRssMb = rssMb(pid);
  let peakRssMb = startRssMb;
  let childrenPeakRssMb = 0;
  while (performance.now() - quietSince < quietMs && performance.now() - start < maxMs) {
    await new Promise((r) => setTimeout(r, 500));
    const before = cpu;
    cpu = treeCpuSeconds(pid);
    if (cpu - before > 0.05) quietSince = performance.now();
    peakRssMb = Math.max(peakRssMb, rssMb(pid));
    const children = childPids(pid).reduce((sum, child) => sum + (rssMb(child) || 0), 0);
    childrenPeakRssMb = Math.max(childrenPeakRssMb, children);
  }
  return {
    busySeconds: (quietSince - start) / 1000,
    cpuSeconds: cpu - cpu0,
    quiet: performance.now() - quietSince >= quietMs,
    startRssMb,
    peakRssMb,
    childrenPeakRssMb,
  };
}

/**
 * CPU seconds per thread name (/proc/<pid>/task/<tid>/comm): `MainThread` (the event loop), `libuv-worker`
 * (Node's pool, where Kuzu's binding runs its queries and the journal syncs), `WorkerThread` (the
 * embedder), `lance-cpu`/`tokio-rt-worker` (LanceDB), `V8Worker` (the collector's helpers). A thread that
 * exited meanwhile takes its seconds with it, so differences of two readings are a floor.
 */
export function cpuByThread(pid: number | undefined): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The thread exited between the listing and the read.
    }
  }
  return byName;
}

/** `after` minus `before`, per name, largest first. */
export function threadCpuSince(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after.entries()]
    .map(([name, s]): [string, number] => [name, s - (before.get(name) ?? 0)])
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1]);
}
