// Space copies kept on disk, so that a search of a space whose copy was dropped from memory reads one small
// file instead of LanceDB, and searches it where it lies (packed-search.ts). A copy's load through the
// `space` bitmap costs ~10 ms on a quiet server but ~0.2 s when the server is busy (two LanceDB queries,
// each a hop to its threads and a DataFusion plan), and with 2,000 users searched at random the copies'
// memory holds ~300 of them: most searches loaded one.
//
// A file is complete or absent. It is written whole from a load read from the table, or started with a
// space's first row in a tenant whose table this process created (every row of it then passes through
// `append`), and then gets every row the table gets (and the rows a search adds before the table has
// them), each row once, in seq order. Anything else that changes a table (a tenant dropped, rows deleted)
// drops its files. The files live for one process: a start moves the last run's folder aside and removes
// it in the background, so a crash between a table's append and its files' never leaves a file that misses
// rows. Files beyond the disk budget are removed least recently read first; a failed write removes its
// file. Either way the space is read from the table again.
//
// What each file holds is decided here, on the event loop, in the order rows reach the table; the bytes
// are written and searched by a CopyIO (copy-io.ts): on a thread of their own by default (copy-thread.ts),
// which does them in the same order.
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Hit } from '../index-row.ts';
import { LocalCopyIO, type CopyEvents, type CopyIO } from './copy-io.ts';
import type { FileSearch } from './copy-store.ts';
import { CopyThread } from './copy-thread.ts';
import type { SpaceRow } from './packed-format.ts';

/** A load that read the table and will write the scope's file whole. */
interface Pending {
  /** Rows the table got after the load's read began (and their tokens), written after the load's own. */
  appended: SpaceRow[];
  tokens: (readonly string[] | undefined)[];
}

/** What is known of a complete file: its bytes as last told (an append's are told after it). */
interface Held {
  bytes: number;
  rows: number;
  maxSeq: number;
}

export class CopyFiles {
  readonly #budget: number;
  readonly #maxRows: number;
  readonly #warn: (message: string) => void;
  /** The bytes' side; null once it was lost (every file is then gone, and none is made again). */
  #io: CopyIO | null;
  /** Complete files, least recently read first. */
  readonly #files = new Map<string, Held>();
  #bytes = 0;
  readonly #pending = new Map<string, Set<Pending>>();
  /** Scopes whose file was removed: only a load from the table writes theirs again. */
  readonly #gone = new Set<string>();
  /** Removals of each scope's file so far: a load's rows are not written over a removal that followed its read. */
  readonly #removals = new Map<string, number>();
  /** Each warning is said once: the budget passed, a write failed. */
  #warnedBudget = false;
  #warnedFailure = false;
  readonly #counts = { writes: 0, appends: 0, removed: 0, failed: 0 };

  /**
   * Files under `dir`, at most `budgetBytes` together, each of at most `maxRows` rows (a scope past them is
   * no longer copied with its vectors); the last run's files there are removed. With `thread` their bytes
   * are written and searched on a thread of their own, else on the caller's (or by `io`: tests).
   */
  constructor(
    dir: string,
    budgetBytes: number,
    maxRows: number,
    warn: (message: string) => void = (m) => console.error(m),
    { thread = false, io }: { thread?: boolean; io?: (dir: string, events: CopyEvents) => CopyIO } = {},
  ) {
    this.#budget = budgetBytes;
    this.#maxRows = maxRows;
    this.#warn = warn;
    if (existsSync(dir)) {
      const aside = `${dir}.old-${process.pid}-${Date.now()}`;
      renameSync(dir, aside);
      // Not awaited: a large folder takes a while, and nothing reads it any more.
      void rm(aside, { recursive: true, force: true }).catch(() => undefined);
    }
    mkdirSync(dir, { recursive: true });
    const events: CopyEvents = {
      sized: (key, bytes) => this.#sized(key, bytes),
      failed: (key, error) => this.#failed(key, error),
      lost: (why) => this.#lost(why),
    };
    this.#io = io ? io(dir, events) : thread ? new CopyThread(dir, events) : new LocalCopyIO(dir, events);
  }

  /** Files written whole, appends, searches that read a file, merges, files removed, and writes or reads that failed. */
  get counts(): { reads: number; writes: number; appends: number; merges: number; removed: number; failed: number } {
    return { ...this.#counts, reads: this.#io?.counts.reads ?? 0, merges: this.#io?.counts.merges ?? 0 };
  }

  /** Whether the scope's file is complete (a load may read it instead of the table). */
  has(key: string): boolean {
    return this.#files.has(key);
  }

  /** Whether a load of the scope waits to write its file (rows the table gets are kept for it). */
  pending(key: string): boolean {
    return this.#pending.has(key);
  }

  /** Rows of the scope's complete file, or undefined. */
  rows(key: string): number | undefined {
    return this.#files.get(key)?.rows;
  }

  /** The highest seq in the scope's complete file, or undefined. */
  maxSeq(key: string): number | undefined {
    return this.#files.get(key)?.maxSeq;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#files.size;
  }

  /**
   * The lists asked of the scope's file as it is now, or null when it is gone or could not be read (then it
   * is removed, counted as failed).
   */
  async search(key: string, asked: readonly FileSearch[]): Promise<Hit[][] | null> {
    const held = this.#files.get(key);
    if (!held || !this.#io) return null;
    this.#held(key, held);
    const found = await this.#io.search(key, held.rows, asked);
    // Null for a file still counted complete with the same rows: the bytes' side could not read it.
    if (found === null && this.#files.get(key) === held) this.#failed(key, 'a read found it damaged');
    return found;
  }

  /**
   * Keeps the rows the table gets from now on for a load about to read it: call the function returned with
   * the rows read (seq ascending) and their tokens to write the file whole, those rows following, or with
   * null to leave it.
   */
  reserve(key: string): (rows: readonly SpaceRow[] | null, tokens?: readonly (readonly string[])[]) => void {
    const removals = this.#removals.get(key) ?? 0;
    const pending: Pending = { appended: [], tokens: [] };
    const set = this.#pending.get(key) ?? new Set<Pending>();
    set.add(pending);
    this.#pending.set(key, set);
    let done = false;
    return (rows, tokens) => {
      if (done) return;
      done = true;
      set.delete(pending);
      if (set.size === 0 && this.#pending.get(key) === set) this.#pending.delete(key);
      // Not when the file was removed since the read began: its rows may have changed under the load.
      if (rows === null || tokens === undefined || (this.#removals.get(key) ?? 0) !== removals) return;
      const all = [...rows];
      const allTokens: (readonly string[] | undefined)[] = [...tokens];
      let last = rows[rows.length - 1]?.seq ?? Number.NEGATIVE_INFINITY;
      pending.appended.forEach((r, i) => {
        if (r.seq <= last) return;
        last = r.seq;
        all.push(r);
        allTokens.push(pending.tokens[i]);
      });
      if (all.length > this.#maxRows) return this.remove(key);
      // Rows the table got without tokens (before its full-text index) cannot be scored from a file.
      if (allTokens.length !== all.length || allTokens.some((t) => t === undefined)) return this.remove(key);
      if (!this.#io) return;
      this.#gone.delete(key);
      this.#counts.writes++;
      this.#held(key, { bytes: this.#files.get(key)?.bytes ?? 0, rows: all.length, maxSeq: last });
      this.#io.append(key, all, allTokens as (readonly string[])[], true);
    };
  }

  /**
   * Adds rows the table just got (or that a search adds before it has them) to the scope's file, each row
   * once. With `start`, makes the file when the scope never had one: its first rows in a table this process
   * created. Without tokens (a table's first rows, before its full-text index) the file is removed: a file
   * that cannot score a row is not complete.
   */
  append(key: string, rows: readonly SpaceRow[], start = false, tokens?: readonly (readonly string[])[]): void {
    for (const p of this.#pending.get(key) ?? []) {
      p.appended.push(...rows);
      p.tokens.push(...rows.map((_, i) => tokens?.[i]));
    }
    if (!this.#io || (!this.#files.has(key) && !(start && !this.#gone.has(key)))) return;
    if (tokens === undefined || tokens.length !== rows.length) return this.remove(key);
    const held = this.#files.get(key);
    const fresh: SpaceRow[] = [];
    const freshTokens: (readonly string[])[] = [];
    let last = held?.maxSeq ?? Number.NEGATIVE_INFINITY;
    for (const n of [...rows.keys()].sort((a, b) => rows[a]!.seq - rows[b]!.seq)) {
      if (rows[n]!.seq <= last) continue;
      last = rows[n]!.seq;
      fresh.push(rows[n]!);
      freshTokens.push(tokens[n]!);
    }
    if (fresh.length === 0) return;
    if ((held?.rows ?? 0) + fresh.length > this.#maxRows) return this.remove(key);
    this.#counts.appends++;
    this.#held(key, { bytes: held?.bytes ?? 0, rows: (held?.rows ?? 0) + fresh.length, maxSeq: last });
    this.#io.append(key, fresh, freshTokens, held === undefined);
  }

  /** Removes the scope's file (its rows changed other than by appends, or it outgrew a copy). */
  remove(key: string): void {
    const held = this.#files.get(key);
    this.#gone.add(key);
    this.#removals.set(key, (this.#removals.get(key) ?? 0) + 1);
    if (held !== undefined) {
      this.#files.delete(key);
      this.#bytes -= held.bytes;
      this.#counts.removed++;
    }
    // Also when not counted complete: a write that failed may have left part of one.
    this.#io?.remove(key);
  }

  /** Closes the files kept open (they stay on disk; the next start removes them). */
  close(): void {
    this.#io?.close();
  }

  /** Removes the files whose keys `drop` selects. */
  removeWhere(drop: (key: string) => boolean): void {
    for (const k of [...this.#files.keys()]) if (drop(k)) this.remove(k);
  }

  /** Counts the scope's file complete as `held`, most recently used. */
  #held(key: string, held: Held): void {
    this.#files.delete(key);
    this.#files.set(key, held);
  }

  /** The bytes' side wrote the scope's file: its size counts against the budget, least recently read removed past it. */
  #sized(key: string, bytes: number): void {
    const held = this.#files.get(key);
    if (!held) return;
    this.#bytes += bytes - held.bytes;
    held.bytes = bytes;
    if (this.#bytes <= this.#budget) return;
    if (!this.#warnedBudget) {
      this.#warnedBudget = true;
      this.#warn(
        `search copies: their files passed SVC_SEARCH_COPY_FILES_MB=${Math.round(this.#budget / 1048576)}; the least recently ` +
          `read are removed, and those spaces' copies are read from LanceDB again when next searched.`,
      );
    }
    for (const k of [...this.#files.keys()]) {
      if (this.#bytes <= this.#budget) break;
      if (k !== key) this.remove(k);
    }
  }

  #failed(key: string, error: string): void {
    this.#counts.failed++;
    if (!this.#warnedFailure) {
      this.#warnedFailure = true;
      this.#warn(`search copies: a copy file could not be written or read (${error}); its space is read from LanceDB instead.`);
    }
    this.remove(key);
  }

  /** The bytes' side stopped: every file is gone, and spaces are read from LanceDB from now on. */
  #lost(why: string): void {
    this.#io = null;
    this.#warn(`search copies: ${why}; copy files are no longer used, and spaces are read from LanceDB instead.`);
    for (const k of [...this.#files.keys()]) this.remove(k);
  }
}
