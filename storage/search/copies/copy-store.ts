// The copy files' bytes: written whole, appended to, merged, read and searched, on whichever thread holds
// the store (copy-thread.ts runs one off the event loop). Which rows a file gets, and when a file is
// complete, is copy-files.ts's to decide; the store only keeps what it was told, and says when it cannot.
//
// The files are read and written synchronously, and read into one buffer kept for the purpose: each is
// small (~0.9 KB a row) and in the page cache, and Node's thread pool, which asynchronous calls wait for,
// is where the graph store's queries run (under load a read of 180 KB through it took ~80 ms). A new buffer
// for each read would be memory outside V8's heap, whose every few tens of megabytes allocated start a full
// collection of the heap: at a few hundred searches a second, one every second or two. The files last used
// stay open (OPEN_FILES), and each key's file name is kept: opening, closing and hashing the name for every
// read and append were 4% of the event loop's time under the mixed load at 300k rows.
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Hit, RowFilter } from '../index-row.ts';
import { decodeSegments, encodeSegment, openSegments, type Segment, type SpaceRow } from './packed-format.ts';
import { packedFullText, packedNearest } from './packed-search.ts';
import type { MirrorRow } from './vector-mirror.ts';

const fileName = (key: string): string => `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.rows`;

/** Files kept open, the least recently used closed past it. */
export const OPEN_FILES = 128;

/**
 * Appended segments are merged as a binary counter's digits carry: after an append, the segments at the
 * end are written again as one while the one before them holds fewer than twice their rows. So a file
 * holds about log2 of its appends' segments (each costs a search a lookup per word), and a row is written
 * again about log2 times, not once per append as a merge of the whole file each time would (a space grown
 * to 20,000 rows one row at a time: ~1,250 merges of up to 20,000 rows). Segments past this many rows are
 * left as they are.
 */
export const MERGE_MAX_ROWS = 4096;

/** One list a search asks of a file: BM25 over its tokens, or the nearest rows of a vector column. */
export type FileSearch =
  | { list: 'text'; tokens: readonly string[]; filter: RowFilter; limit: number }
  | { list: 'near'; query: Float32Array; filter: RowFilter; limit: number; column: 'vector' | 'wvec' };

/** A file's layout. Its length is the bytes in use: a merge that shrinks its tail leaves stale bytes past it, never read. */
interface Layout {
  bytes: number;
  rows: number;
  /** Each segment's rows and bytes, in the file's order. */
  segments: { rows: number; bytes: number }[];
  /** Changes with every write to the file: the buffer's segments are the file's while it is the same. */
  version: number;
}

export class CopyStore {
  readonly #dir: string;
  readonly #files = new Map<string, Layout>();
  /** Every read lands here (8-byte aligned, as segments are read), grown to the largest file read. */
  #scratch = Buffer.allocUnsafeSlow(0);
  /** The file the buffer holds now: a search reads its space's file once for its lists. */
  #inScratch: { key: string; version: number; segments: Segment[] } | null = null;
  #versions = 0;
  /** Descriptors of files open for reading and writing, least recently used first. */
  readonly #open = new Map<string, number>();
  /** Each key's path, once made (until its file is removed). */
  readonly #paths = new Map<string, string>();
  readonly counts = { reads: 0, merges: 0 };

  /** Files under `dir`, made if missing (copy-files.ts clears the last run's). */
  constructor(dir: string) {
    this.#dir = dir;
    mkdirSync(dir, { recursive: true });
  }

  /**
   * Adds rows (seq ascending, each past the file's) as a segment at the file's end, or with `create` writes
   * the file anew with them (a load's rows, or a scope's first); the file's bytes after any merge. Throws,
   * the file removed, when it cannot or when there is no file to add to (one that failed before).
   */
  append(key: string, rows: readonly SpaceRow[], tokens: readonly (readonly string[])[], create: boolean): number {
    const held = create ? { bytes: 0, rows: 0, segments: [], version: 0 } : this.#files.get(key);
    if (!held) throw new Error('no such copy file');
    const bytes = encodeSegment(rows, tokens);
    try {
      if (create) {
        this.#close(key);
        this.#fd(key, 'w+');
      }
      this.#writeAt(key, bytes, held.bytes);
    } catch (error) {
      this.remove(key);
      throw error;
    }
    this.#files.set(key, {
      bytes: held.bytes + bytes.length,
      rows: held.rows + rows.length,
      segments: [...held.segments, { rows: rows.length, bytes: bytes.length }],
      version: ++this.#versions,
    });
    this.#mergeTail(key);
    return this.#files.get(key)?.bytes ?? 0;
  }

  /** Writes the segments at the file's end again as one, as MERGE_MAX_ROWS says; reads only those. */
  #mergeTail(key: string): void {
    const held = this.#files.get(key);
    if (!held) return;
    const sizes = held.segments;
    let from = sizes.length - 1;
    let rows = sizes[from]?.rows ?? 0;
    while (from > 0 && sizes[from - 1]!.rows < 2 * rows && sizes[from - 1]!.rows + rows <= MERGE_MAX_ROWS) rows += sizes[--from]!.rows;
    if (from >= sizes.length - 1) return;
    const kept = sizes.slice(0, from).reduce((n, s) => n + s.bytes, 0);
    try {
      const tail = this.#read(key, kept, held.bytes - kept);
      const segments = tail && openSegments(this.#scratch, held.bytes - kept);
      if (!segments || segments.reduce((n, s) => n + s.rows, 0) !== rows) throw new Error('its last segments could not be read back');
      const merged = decodeSegments(segments);
      const bytes = encodeSegment(merged.rows, merged.tokens);
      this.#writeAt(key, bytes, kept);
      this.counts.merges++;
      this.#files.set(key, {
        bytes: kept + bytes.length,
        rows: held.rows,
        segments: [...sizes.slice(0, from), { rows, bytes: bytes.length }],
        version: ++this.#versions,
      });
    } catch (error) {
      this.remove(key);
      throw error;
    }
  }

  /**
   * The lists asked of the scope's file, or null when it holds no file of `rows` rows (it failed, or was
   * removed since) or the file cannot be read or searched (then it is removed).
   */
  search(key: string, rows: number, asked: readonly FileSearch[]): Hit[][] | null {
    const held = this.#files.get(key);
    if (!held || held.rows !== rows) return null;
    let segments = this.#inScratch?.key === key && this.#inScratch.version === held.version ? this.#inScratch.segments : null;
    if (!segments) {
      this.#inScratch = null;
      try {
        segments = this.#read(key, 0, held.bytes) ? openSegments(this.#scratch, held.bytes) : null;
      } catch {
        segments = null;
      }
      if (segments === null || segments.reduce((n, s) => n + s.rows, 0) !== held.rows) {
        this.remove(key);
        return null;
      }
      this.counts.reads++;
      this.#inScratch = { key, version: held.version, segments };
    }
    try {
      return asked.map((s) =>
        s.list === 'text'
          ? packedFullText(segments, s.tokens, s.filter, s.limit)
          : packedNearest(segments, s.query, s.filter, s.limit, s.column),
      );
    } catch {
      // A damage the read's checks missed.
      this.remove(key);
      return null;
    }
  }

  /** Rows of each segment of the scope's file (tests). */
  segmentRows(key: string): number[] | undefined {
    return this.#files.get(key)?.segments.map((s) => s.rows);
  }

  /** The rows of the scope's file as read back from it, or null when it has none or it cannot be read (tests). */
  decoded(key: string): MirrorRow[] | null {
    const held = this.#files.get(key);
    if (!held || !this.#read(key, 0, held.bytes)) return null;
    const segments = openSegments(this.#scratch, held.bytes);
    return segments && decodeSegments(segments).rows;
  }

  /** Removes the scope's file, complete or not (a write that failed may have left part of one). */
  remove(key: string): void {
    this.#files.delete(key);
    if (this.#inScratch?.key === key) this.#inScratch = null;
    this.#close(key);
    try {
      rmSync(this.#path(key), { force: true });
    } catch {
      // Never read again: a stray file is removed with the folder.
    }
    // Names are kept for the files there are, not for every space ever copied.
    this.#paths.delete(key);
  }

  /** Closes the files kept open (they stay on disk; the next start removes them). */
  close(): void {
    for (const key of [...this.#open.keys()]) this.#close(key);
  }

  /** Reads `length` bytes from `at` into the buffer; false when the file is shorter. */
  #read(key: string, at: number, length: number): boolean {
    this.#inScratch = null;
    if (this.#scratch.length < length) this.#scratch = Buffer.allocUnsafeSlow(length + (length >> 3));
    return readSync(this.#fd(key), this.#scratch, 0, length, at) === length;
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
}
