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
// The files are read and written synchronously, and read into one buffer kept for the purpose: each is
// small (~0.9 KB a row) and in the page cache, and Node's thread pool, which its asynchronous calls wait
// for, is where the graph store's queries run (under load a read of 180 KB through it took ~80 ms). A new
// buffer for each read would be memory outside V8's heap, whose every few tens of megabytes allocated
// start a full collection of the heap: at a few hundred searches a second, one every second or two. The
// files last used stay open (OPEN_FILES), and each key's file name is kept: opening, closing and hashing
// the name for every read and append were 4% of the event loop's time under the mixed load at 300k rows.
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { decodeSegments, encodeSegment, openSegments, type Segment, type SpaceRow } from './packed-format.ts';

const fileName = (key: string): string => `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.rows`;

/** Files kept open, the least recently used closed past it. */
export const OPEN_FILES = 128;

/**
 * Appended segments are merged as a binary counter's digits carry: after an append, the segments at the
 * end are written again as one while the one before them holds fewer than twice their rows. So a file
 * holds about log2 of its appends' segments (each costs a search a lookup per word), and a row is written
 * again about log2 times, not once per append as a merge of the whole file each time would (a space grown
 * to 20,000 rows one row at a time: ~1,250 merges of up to 20,000 rows). Segments past this many rows are
 * left as they are: a merge runs on the event loop.
 */
export const MERGE_MAX_ROWS = 4096;

/** A load that read the table and will write the scope's file whole. */
interface Pending {
  /** Rows the table got after the load's read began (and their tokens), written after the load's own. */
  appended: SpaceRow[];
  tokens: (readonly string[] | undefined)[];
}

/** What is known of a complete file. */
interface Held {
  bytes: number;
  rows: number;
  maxSeq: number;
  /** Each segment's rows and bytes, in the file's order. */
  segments: { rows: number; bytes: number }[];
  /** Changes with every write to the file: the buffer's segments are the file's while it is the same. */
  version: number;
}

export class CopyFiles {
  readonly #dir: string;
  readonly #budget: number;
  readonly #maxRows: number;
  readonly #warn: (message: string) => void;
  /** Complete files, least recently read first. */
  readonly #files = new Map<string, Held>();
  /** Every read lands here (8-byte aligned, as segments are read), grown to the largest file read. */
  #scratch = Buffer.allocUnsafeSlow(0);
  /** The file the buffer holds now: a search reads its space's file for its full text and again for its vectors. */
  #inScratch: { key: string; version: number; segments: Segment[] } | null = null;
  #versions = 0;
  #bytes = 0;
  readonly #pending = new Map<string, Set<Pending>>();
  /** Scopes whose file was removed: only a load from the table writes theirs again. */
  readonly #gone = new Set<string>();
  /** Removals of each scope's file so far: a load's rows are not written over a removal that followed its read. */
  readonly #removals = new Map<string, number>();
  /** Each warning is said once: the budget passed, a write failed. */
  #warnedBudget = false;
  #warnedFailure = false;
  readonly counts = { reads: 0, writes: 0, appends: 0, merges: 0, removed: 0, failed: 0 };
  /** Descriptors of files open for reading and writing, least recently used first. */
  readonly #open = new Map<string, number>();
  /** Each key's path, once made (until its file is removed). */
  readonly #paths = new Map<string, string>();

  /**
   * Files under `dir`, at most `budgetBytes` together, each of at most `maxRows` rows (a scope past them is
   * no longer copied with its vectors); the last run's files there are removed.
   */
  constructor(dir: string, budgetBytes: number, maxRows: number, warn: (message: string) => void = (m) => console.error(m)) {
    this.#dir = dir;
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

  /** Removes a file found unreadable, counted as failed. */
  discard(key: string): void {
    this.counts.failed++;
    this.remove(key);
  }

  /**
   * The scope's file as segments, or null when it is absent or unreadable (then removed). They are views of
   * one buffer that the next read writes over: use them before anything else reads a file.
   */
  segments(key: string): Segment[] | null {
    const held = this.#files.get(key);
    if (!held) return null;
    if (this.#inScratch?.key === key && this.#inScratch.version === held.version) return this.#inScratch.segments;
    this.#inScratch = null;
    let segments: Segment[] | null = null;
    try {
      if (this.#scratch.length < held.bytes) this.#scratch = Buffer.allocUnsafeSlow(held.bytes + (held.bytes >> 3));
      if (readSync(this.#fd(key), this.#scratch, 0, held.bytes, 0) === held.bytes) segments = openSegments(this.#scratch, held.bytes);
    } catch {
      // unreadable: as below
    }
    if (segments === null || segments.reduce((n, s) => n + s.rows, 0) !== held.rows) {
      this.discard(key);
      return null;
    }
    this.counts.reads++;
    this.#files.delete(key);
    this.#files.set(key, held);
    this.#inScratch = { key, version: held.version, segments };
    return segments;
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
      this.#write(key, all, allTokens as (readonly string[])[]);
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
    if (!this.#files.has(key) && !(start && !this.#gone.has(key))) return;
    if (tokens === undefined || tokens.length !== rows.length) return this.remove(key);
    const held = this.#files.get(key) ?? { bytes: 0, rows: 0, maxSeq: Number.NEGATIVE_INFINITY, segments: [], version: 0 };
    const fresh: SpaceRow[] = [];
    const freshTokens: (readonly string[])[] = [];
    let last = held.maxSeq;
    for (const n of [...rows.keys()].sort((a, b) => rows[a]!.seq - rows[b]!.seq)) {
      if (rows[n]!.seq <= last) continue;
      last = rows[n]!.seq;
      fresh.push(rows[n]!);
      freshTokens.push(tokens[n]!);
    }
    if (fresh.length === 0) return;
    if (held.rows + fresh.length > this.#maxRows) return this.remove(key);
    const bytes = encodeSegment(fresh, freshTokens);
    try {
      if (held.bytes === 0) this.#create(key);
      this.#writeAt(key, bytes, held.bytes);
    } catch (error) {
      return this.#failed(key, error);
    }
    this.counts.appends++;
    this.#sized(key, {
      bytes: held.bytes + bytes.length,
      rows: held.rows + fresh.length,
      maxSeq: last,
      segments: [...held.segments, { rows: fresh.length, bytes: bytes.length }],
      version: 0,
    });
    this.#mergeTail(key);
  }

  /** Writes the segments at the file's end again as one, as MERGE_MAX_ROWS says. */
  #mergeTail(key: string): void {
    const held = this.#files.get(key);
    if (!held) return;
    const sizes = held.segments;
    let from = sizes.length - 1;
    let rows = sizes[from]?.rows ?? 0;
    while (from > 0 && sizes[from - 1]!.rows < 2 * rows && sizes[from - 1]!.rows + rows <= MERGE_MAX_ROWS) rows += sizes[--from]!.rows;
    if (from >= sizes.length - 1) return;
    const segments = this.segments(key);
    if (!segments) return;
    const tail = decodeSegments(segments.slice(from));
    const bytes = encodeSegment(tail.rows, tail.tokens);
    const kept = sizes.slice(0, from).reduce((n, s) => n + s.bytes, 0);
    try {
      ftruncateSync(this.#fd(key), kept);
      this.#writeAt(key, bytes, kept);
    } catch (error) {
      return this.#failed(key, error);
    }
    this.counts.merges++;
    this.#sized(key, { ...held, bytes: kept + bytes.length, segments: [...sizes.slice(0, from), { rows, bytes: bytes.length }] });
  }

  #write(key: string, rows: readonly SpaceRow[], tokens: readonly (readonly string[])[]): void {
    const bytes = encodeSegment(rows, tokens);
    try {
      this.#create(key);
      this.#writeAt(key, bytes, 0);
    } catch (error) {
      return this.#failed(key, error);
    }
    this.#gone.delete(key);
    this.counts.writes++;
    this.#sized(key, {
      bytes: bytes.length,
      rows: rows.length,
      maxSeq: rows[rows.length - 1]?.seq ?? Number.NEGATIVE_INFINITY,
      segments: [{ rows: rows.length, bytes: bytes.length }],
      version: 0,
    });
  }

  /** Removes the scope's file (its rows changed other than by appends, or it outgrew a copy). */
  remove(key: string): void {
    const held = this.#files.get(key);
    this.#gone.add(key);
    this.#removals.set(key, (this.#removals.get(key) ?? 0) + 1);
    if (held !== undefined) {
      this.#files.delete(key);
      this.#bytes -= held.bytes;
      this.counts.removed++;
    }
    this.#close(key);
    // Also when not counted complete: a write that failed may have left part of one.
    try {
      rmSync(this.#path(key), { force: true });
    } catch {
      // Not counted as complete any more, so never read: a stray file is removed with the folder.
    }
    // Names are kept for the files there are, not for every space ever copied.
    this.#paths.delete(key);
  }

  /** Closes the files kept open (they stay on disk; the next start removes them). */
  close(): void {
    for (const key of [...this.#open.keys()]) this.#close(key);
  }

  #path(key: string): string {
    let path = this.#paths.get(key);
    if (path === undefined) this.#paths.set(key, (path = join(this.#dir, fileName(key))));
    return path;
  }

  /** The key's file, open for reading and writing (opened if it is not). */
  #fd(key: string, flags = 'r+'): number {
    let fd = this.#open.get(key);
    if (fd !== undefined) {
      this.#open.delete(key);
      this.#open.set(key, fd);
      return fd;
    }
    fd = openSync(this.#path(key), flags);
    this.#open.set(key, fd);
    if (this.#open.size > OPEN_FILES) this.#close(this.#open.keys().next().value!);
    return fd;
  }

  /** Makes the key's file anew, empty. */
  #create(key: string): void {
    this.#close(key);
    this.#fd(key, 'w+');
  }

  #writeAt(key: string, bytes: Uint8Array, at: number): void {
    const fd = this.#fd(key);
    for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done, at + done);
  }

  #close(key: string): void {
    const fd = this.#open.get(key);
    if (fd === undefined) return;
    this.#open.delete(key);
    try {
      closeSync(fd);
    } catch {
      // Nothing more to do with it.
    }
  }

  /** Removes the files whose keys `drop` selects. */
  removeWhere(drop: (key: string) => boolean): void {
    for (const k of [...this.#files.keys()]) if (drop(k)) this.remove(k);
  }

  #sized(key: string, held: Held): void {
    this.#bytes += held.bytes - (this.#files.get(key)?.bytes ?? 0);
    this.#files.delete(key);
    this.#files.set(key, { ...held, version: ++this.#versions });
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

  #failed(key: string, error: unknown): void {
    this.counts.failed++;
    if (!this.#warnedFailure) {
      this.#warnedFailure = true;
      this.#warn(`search copies: a copy file could not be written (${String(error)}); its space is read from LanceDB instead.`);
    }
    this.remove(key);
  }
}
