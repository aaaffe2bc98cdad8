// Opening the graph store after an unclean stop, safely. A SIGKILL during one of Kuzu 0.11.3's
// checkpoints can leave a store on which the engine crashes (SIGSEGV) at every later open: a WAL it cannot
// replay (the deletions a COPY with ignore_errors logs for the keys it skipped), or a primary-key index out
// of step with its pages (docs/storage.md, "A kill during a checkpoint").
//
// After an unclean stop the journal is therefore first copied in by a child process. A child ended by a
// signal is the engine crashing, not a failure it reports: the engine's WAL and shadow file are set aside
// in `broken-<time>/` and the journal copied in again (the copy the WAL holds had not returned, so its rows
// are in the journal); when that crashes too, the store is rebuilt from its rows (EXPORT DATABASE of the
// store opened read-only, IMPORT DATABASE into a new file, every table's count checked), the old file goes
// aside as well, and the journal is copied into the rebuilt store. A failure the engine reports (a full
// disk, a permission) is left to the open in this process, which says it.
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { besideCaller, forkApart } from '../../fork-apart.ts';
import { segmentName, segmentsIn, syncDir } from './write-journal.ts';

export const STORE_FILE = 'graph.kuzu';
/** Where a rebuild is made; `ready` in it once the rebuilt store is complete and checked. */
export const REBUILD_DIR = 'rebuild';
export const READY = 'ready';
/** Files of the engine's that go aside with the store they belong to. */
const ENGINE_FILES = [STORE_FILE, `${STORE_FILE}.wal`, `${STORE_FILE}.shadow`];

export type RepairStep = 'recover' | 'rebuild';

/** How a child ended: done (with the lines it logged), a failure it reported, or ended by a signal. */
export type ChildEnd = { ok: true; logged: string[] } | { ok: false; signal: NodeJS.Signals | null; message: string };

const CHILD = besideCaller(import.meta.url, 'store-repair-child');

/** Runs one step on the store in `dir` in a child process. */
export async function runStep(dir: string, step: RepairStep, env: NodeJS.ProcessEnv = process.env): Promise<ChildEnd> {
  try {
    const { code, signal, stderr } = await forkApart(CHILD, [step, dir], env).exited;
    if (code === 0) return { ok: true, logged: stderr.split('\n').filter((line) => line.trim() !== '') };
    return { ok: false, signal, message: stderr.trim() || (signal ? `ended by ${signal}` : `exited with ${code}`) };
  } catch (error) {
    return { ok: false, signal: null, message: (error as Error).message };
  }
}

/** Whether the store was left by an unclean stop: the engine's WAL or shadow file, or rows still in the journal. */
export function uncleanStore(dir: string): boolean {
  if (existsSync(join(dir, `${STORE_FILE}.wal`)) || existsSync(join(dir, `${STORE_FILE}.shadow`))) return true;
  if (!existsSync(dir)) return false;
  return segmentsIn(dir).some((n) => statSync(join(dir, segmentName(n))).size > 0);
}

/** The folder a store's old files go to, named for the time. */
const asideFor = (dir: string, now: Date): string => join(dir, `broken-${now.toISOString().replace(/[:.]/g, '-')}`);

/** Moves those of `names` that exist from `dir` to `aside`; returns the ones moved. */
function moveAside(dir: string, names: readonly string[], aside: string): string[] {
  const moved = names.filter((name) => existsSync(join(dir, name)));
  if (moved.length === 0) return moved;
  mkdirSync(aside, { recursive: true });
  for (const name of moved) renameSync(join(dir, name), join(aside, name));
  syncDir(dir);
  return moved;
}

/**
 * Puts a checked rebuild in place of the store, the old files moved to `aside`; also finishes a swap a
 * stop interrupted. Returns the folder the old files went to, or null when there was no rebuild.
 */
export function swapRebuilt(dir: string, aside: string = asideFor(dir, new Date())): string | null {
  const rebuild = join(dir, REBUILD_DIR);
  if (!existsSync(join(rebuild, READY))) {
    // An unfinished rebuild is only a scratch folder: the store it was made from is untouched.
    rmSync(rebuild, { recursive: true, force: true });
    return null;
  }
  const rebuilt = join(rebuild, STORE_FILE);
  if (existsSync(rebuilt)) {
    moveAside(dir, ENGINE_FILES, aside);
    renameSync(rebuilt, join(dir, STORE_FILE));
    syncDir(dir);
  }
  rmSync(rebuild, { recursive: true, force: true });
  return aside;
}

/**
 * Makes the store in `dir` safe to open in this process: after an unclean stop its recovery runs in a
 * child first. When the engine kills that child, its WAL is set aside and the journal copied in again;
 * when that crashes too, the store is rebuilt from its rows. Throws when even that fails, saying where
 * the files are.
 */
export async function recoverApart(
  dir: string,
  log: (line: string) => void,
  run: typeof runStep = runStep,
  now: Date = new Date(),
): Promise<void> {
  swapRebuilt(dir);
  if (!uncleanStore(dir)) return;
  const aside = asideFor(dir, now);
  // What a recovery logged (a migration, an index built again) is the server's to say.
  const relay = (end: ChildEnd): void => {
    if (end.ok) for (const line of end.logged) log(line);
  };
  const first = await run(dir, 'recover');
  relay(first);
  if (first.ok || !first.signal) return;
  // A COPY that skipped stored keys (ignore_errors: the ledger's copies of Space, TenantSpace and Ident rows,
  // copyFrom in tables.ts) logs their deletion in the WAL, and Kuzu 0.11.3 crashes replaying it when a kill
  // cut the COPY's forced checkpoint short, at every open. That copy had not returned, so its rows are still
  // in the write journal, which is copied in again without the WAL.
  const moved = moveAside(dir, [`${STORE_FILE}.wal`, `${STORE_FILE}.shadow`], aside);
  if (moved.length > 0) {
    log(
      `graph store: copying the write journal in after an unclean stop ended the process (${first.signal}); ` +
        `the engine's ${moved.join(' and ')} set aside in ${aside} (the copy they hold is still in the write journal), copying the journal in again`,
    );
    const second = await run(dir, 'recover');
    relay(second);
    if (second.ok || !second.signal) return;
  }
  log(
    `graph store: copying the write journal in ended the process (${first.signal}) again; ` +
      `rebuilding the store from its rows (Kuzu's EXPORT DATABASE and IMPORT DATABASE), the old files kept in ${aside}`,
  );
  const t0 = performance.now();
  const rebuilt = await run(dir, 'rebuild');
  if (!rebuilt.ok) {
    rmSync(join(dir, REBUILD_DIR), { recursive: true, force: true });
    throw new Error(
      `graph store ${dir}: copying the write journal in ended the process (${first.signal}), and the store could not be ` +
        `rebuilt from its rows: ${rebuilt.message}. The store is where it was${moved.length > 0 ? `, its WAL in ${aside}` : ''}; ` +
        `restore the folder from a backup or an export bundle.`,
    );
  }
  swapRebuilt(dir, aside);
  log(`graph store: rebuilt in ${Math.round(performance.now() - t0)} ms, every table's rows counted equal; the old files are in ${aside}`);
  const again = await run(dir, 'recover');
  relay(again);
  if (!again.ok && again.signal)
    throw new Error(
      `graph store ${dir}: copying the write journal into the rebuilt store ended the process too (${again.signal}); ` +
        `the store before the rebuild is in ${aside}, the journal is kept: nothing acknowledged was removed.`,
    );
}
