// A large table's heavy maintenance runs in a child process: building a vector (HNSW) index, and the
// optimize that compacts it and brings its full-text index up to date. LanceDB holds a whole column while
// it builds an index (~1.5 KB a 384-dimension row), and an optimize after a bulk fill of 3M rows took the
// server to 3.2–3.6 GB (docs/storage.md). In the server such a peak is the server's: past any budget of
// ours, kept in part by the C allocator afterwards, and fatal under a container's memory limit. In a child
// it ends with the child, which a memory limit may kill without the server; the work is then tried again
// at the table's next maintenance. LanceDB commits the child's work beside the server's appends, and the
// server's handle then reads the table's latest version.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { besideCaller, forkApart } from '../../fork-apart.ts';

/** One piece of work on one table of the index's folder, with the server's options. */
export type WorkApart = { dir: string; table: string } & (
  | { kind: 'vector index'; column: string; numPartitions: number; efConstruction: number }
  /** `cleanupOlderThan`: the instant (ms) before which the table's older versions are dropped. */
  | { kind: 'optimize'; cleanupOlderThan: number }
);

/** What an optimize's compaction did. */
export interface OptimizeCounts {
  fragmentsRemoved: number;
  fragmentsAdded: number;
}

const CHILD = besideCaller(import.meta.url, 'work-apart-child');

/** Whether a process of this id still runs (a signal 0 reaches it, or it is another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Each child gets a folder of its own under `scratch` as its TMPDIR, removed once it ends however it
 * ended. LanceDB shuffles a vector index's rows through files in the temporary folder (~300 bytes a row:
 * 891 MB for a 3M-row table) and left them there after every build: in /tmp, which is memory on a tmpfs,
 * one more copy of the table each build, never removed. Folders of a server that was killed are removed
 * by the next runner on the folder.
 */
export class WorkApartRunner {
  /** The work in flight, by table. */
  readonly #running = new Map<ChildProcess, string>();
  readonly #scratch: string;

  constructor(scratch: string) {
    this.#scratch = scratch;
    mkdirSync(scratch, { recursive: true });
    for (const name of readdirSync(scratch)) {
      const pid = Number(name.split('-')[0]);
      if (!Number.isInteger(pid) || !alive(pid)) rmSync(join(scratch, name), { recursive: true, force: true });
    }
  }

  /** Builds a vector index in a child; resolves once it is committed, rejects with the child's failure. */
  async vectorIndex(work: Extract<WorkApart, { kind: 'vector index' }>): Promise<void> {
    await this.#run(work);
  }

  /** Optimizes the table in a child; resolves with its compaction's counts once committed. */
  async optimize(work: Extract<WorkApart, { kind: 'optimize' }>): Promise<OptimizeCounts> {
    const counts = await this.#run(work);
    if (!counts) throw new Error(`the optimize of ${work.table} ended without its counts`);
    return counts;
  }

  async #run(work: WorkApart): Promise<OptimizeCounts | undefined> {
    const tmp = mkdtempSync(join(this.#scratch, `${process.pid}-${work.table}-`));
    const { child, exited } = forkApart(CHILD, [JSON.stringify(work)], { ...process.env, TMPDIR: tmp });
    this.#running.set(child, work.table);
    let counts: OptimizeCounts | undefined;
    child.on('message', (message: OptimizeCounts) => {
      counts = message;
    });
    try {
      const { code, signal, stderr } = await exited;
      if (code === 0) return counts;
      const what =
        work.kind === 'vector index' ? `the ${work.column} index of ${work.table} was not built` : `${work.table} was not optimized`;
      throw new Error(
        `${what}: its process ${signal ? `was ended by ${signal}` : `exited with ${code}`}` +
          (stderr.trim() ? `: ${stderr.trim()}` : '') +
          '; the next maintenance of the table tries again',
      );
    } finally {
      this.#running.delete(child);
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /**
   * Ends the work in flight, on one table or all (a drop, a close): what was not committed is done again
   * by a later maintenance, after a restart too.
   */
  async end(table?: string): Promise<void> {
    const ending = [...this.#running].filter(([, t]) => table === undefined || t === table).map(([child]) => child);
    const ended = ending.map((child) => new Promise((resolve) => child.once('close', resolve)));
    for (const child of ending) child.kill('SIGKILL');
    await Promise.all(ended);
  }
}
