// Space copies kept on disk, so that loading a copy dropped from memory reads one small file instead of
// LanceDB. A copy's load through the `space` bitmap costs ~10 ms on a quiet server but ~0.2 s when the
// server is busy (two LanceDB queries, each a hop to its threads and a DataFusion plan), and with 2,000
// users searched at random the copies' memory holds ~300 of them: most searches loaded one.
//
// A file is complete or absent. It is written whole from a load read from the table, or started with a
// space's first row in a tenant whose table this process created (every row of it then passes through
// `append`), and then gets every row the table gets, in the table's (seq) order. Anything else that
// changes a table (a tenant dropped, rows deleted) drops its files. The files live for one process: a
// start moves the last run's folder aside and removes it in the background, so a crash between a table's
// append and its files' never leaves a file that misses rows. Files beyond the disk budget are removed
// least recently read first; a failed write removes its file. Either way the space is read from the
// table again.
import { appendFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { decodeRows, encodeRows, type SpaceRow } from './copy-file-format.ts';

const fileName = (key: string): string => `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.rows`;

export class CopyFiles {
  readonly #dir: string;
  readonly #budget: number;
  readonly #warn: (message: string) => void;
  /** Complete files, their bytes and rows, least recently read first. */
  readonly #files = new Map<string, { bytes: number; rows: number }>();
  readonly #maxRows: number;
  #bytes = 0;
  /** Each file's operations in the order they were asked. */
  readonly #chains = new Map<string, Promise<unknown>>();
  /** Scopes whose file was removed: only a load from the table writes theirs again. */
  readonly #gone = new Set<string>();
  /** Removals of each scope's file so far: a load's rows are not written over a removal that followed its read. */
  readonly #removals = new Map<string, number>();
  readonly #ready: Promise<void>;
  #warned = false;
  readonly counts = { reads: 0, writes: 0, appends: 0, removed: 0, failed: 0 };

  /**
   * Files under `dir`, at most `budgetBytes` together, each of at most `maxRows` rows (a scope past them is
   * no longer copied with its vectors); the last run's files there are removed.
   */
  constructor(dir: string, budgetBytes: number, maxRows: number, warn: (message: string) => void = (m) => console.error(m)) {
    this.#dir = dir;
    this.#maxRows = maxRows;
    this.#budget = budgetBytes;
    this.#warn = warn;
    this.#ready = this.#start();
  }

  async #start(): Promise<void> {
    if (existsSync(this.#dir)) {
      const aside = `${this.#dir}.old-${process.pid}-${Date.now()}`;
      await rename(this.#dir, aside);
      // Not awaited: a large folder takes a while, and nothing reads it any more.
      void rm(aside, { recursive: true, force: true }).catch(() => undefined);
    }
    await mkdir(this.#dir, { recursive: true });
  }

  /** Whether the scope's file is complete (a load may read it instead of the table). */
  has(key: string): boolean {
    return this.#files.has(key);
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#files.size;
  }

  /** The scope's rows, or null when its file is absent or unreadable (then removed). */
  read(key: string, space: string): Promise<SpaceRow[] | null> {
    return this.#inOrder(key, async () => {
      if (!this.#files.has(key)) return null;
      const text = await readFile(join(this.#dir, fileName(key)), 'utf8').catch(() => null);
      const rows = text === null ? null : decodeRows(text);
      if (rows === null || rows.some((r) => r.space !== space)) {
        this.counts.failed++;
        this.#forget(key);
        await this.#unlink(key);
        return null;
      }
      this.counts.reads++;
      const held = this.#files.get(key);
      if (held) {
        this.#files.delete(key);
        this.#files.set(key, held);
      }
      return rows;
    });
  }

  /**
   * Keeps the scope's place among its file's operations for a load about to read the table: appends asked
   * from now on (rows the table gets after the read began, or during it) are written after the rows the
   * load read. Call the function returned with those rows to write the file whole, or null to leave it.
   */
  reserve(key: string): (rows: readonly SpaceRow[] | null) => Promise<void> {
    const removals = this.#removals.get(key) ?? 0;
    let give: (rows: readonly SpaceRow[] | null) => void = () => undefined;
    const given = new Promise<readonly SpaceRow[] | null>((resolve) => (give = resolve));
    const done = this.#inOrder(key, async () => {
      const rows = await given;
      // Not when the file was removed since the read began: its rows may have changed under the load.
      if (rows !== null && (this.#removals.get(key) ?? 0) === removals) await this.#write(key, rows);
    });
    return (rows) => {
      give(rows);
      return done;
    };
  }

  async #write(key: string, rows: readonly SpaceRow[]): Promise<void> {
    const text = encodeRows(rows);
    try {
      await this.#ready;
      await writeFile(join(this.#dir, fileName(key)), text);
    } catch (error) {
      return this.#failed(key, error);
    }
    this.#gone.delete(key);
    this.counts.writes++;
    this.#sized(key, Buffer.byteLength(text), rows.length);
  }

  /**
   * Adds rows the table just got to the scope's file. With `start`, makes the file when the scope never had
   * one: its first rows in a table this process created.
   */
  append(key: string, rows: readonly SpaceRow[], start = false): Promise<void> {
    return this.#inOrder(key, async () => {
      if (!this.#files.has(key) && !(start && !this.#gone.has(key))) return;
      const held = this.#files.get(key) ?? { bytes: 0, rows: 0 };
      if (held.rows + rows.length > this.#maxRows) {
        this.#forget(key);
        return this.#unlink(key);
      }
      const text = encodeRows(rows);
      try {
        await this.#ready;
        await appendFile(join(this.#dir, fileName(key)), text);
      } catch (error) {
        return this.#failed(key, error);
      }
      this.counts.appends++;
      this.#sized(key, held.bytes + Buffer.byteLength(text), held.rows + rows.length);
    });
  }

  /** Removes the scope's file (its rows changed other than by appends, or it outgrew a copy). */
  remove(key: string): Promise<void> {
    this.#forget(key);
    return this.#inOrder(key, () => this.#unlink(key));
  }

  /** Removes the files whose keys `drop` selects. */
  async removeWhere(drop: (key: string) => boolean): Promise<void> {
    await Promise.all([...this.#files.keys()].filter(drop).map((k) => this.remove(k)));
  }

  /** Waits for every operation asked so far (tests, close). */
  async settled(): Promise<void> {
    await Promise.all([...this.#chains.values()].map((p) => p.catch(() => undefined)));
  }

  #inOrder<T>(key: string, op: () => Promise<T>): Promise<T> {
    const before = this.#chains.get(key) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(op);
    this.#chains.set(key, run);
    void run
      .catch(() => undefined)
      .finally(() => {
        if (this.#chains.get(key) === run) this.#chains.delete(key);
      });
    return run;
  }

  #sized(key: string, bytes: number, rows: number): void {
    this.#bytes += bytes - (this.#files.get(key)?.bytes ?? 0);
    this.#files.delete(key);
    this.#files.set(key, { bytes, rows });
    if (this.#bytes <= this.#budget) return;
    if (!this.#warned) {
      this.#warned = true;
      this.#warn(
        `search copies: their files passed SVC_SEARCH_COPY_FILES_MB=${Math.round(this.#budget / 1048576)}; the least recently ` +
          `read are removed, and those spaces' copies are read from LanceDB again when next searched.`,
      );
    }
    for (const k of [...this.#files.keys()]) {
      if (this.#bytes <= this.#budget) break;
      if (k !== key) void this.remove(k);
    }
  }

  /** Stops counting the scope's file as complete: it is read from the table again, and only a load writes it anew. */
  #forget(key: string): void {
    const held = this.#files.get(key);
    this.#gone.add(key);
    this.#removals.set(key, (this.#removals.get(key) ?? 0) + 1);
    if (held === undefined) return;
    this.#files.delete(key);
    this.#bytes -= held.bytes;
    this.counts.removed++;
  }

  async #unlink(key: string): Promise<void> {
    await rm(join(this.#dir, fileName(key)), { force: true }).catch(() => undefined);
  }

  async #failed(key: string, error: unknown): Promise<void> {
    this.counts.failed++;
    if (!this.#warned) {
      this.#warned = true;
      this.#warn(`search copies: a copy file could not be written (${String(error)}); its space is read from LanceDB instead.`);
    }
    this.#forget(key);
    await this.#unlink(key);
  }
}
