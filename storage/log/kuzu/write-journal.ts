// Commit groups, small and bulk, are made durable here, not in the graph engine: appended to a journal file and
// fdatasync'ed (p50 ~0.4 ms on this disk), then acknowledged; the graph store copies the journal into Kuzu
// later, many groups per COPY. Kuzu 0.11 took one transaction per small group badly: measured here, a
// one-row COPY costs ~50 ms, and prepared CREATE statements, though ~1 ms, twice left a store that would
// not reopen after a SIGKILL ("Found duplicated primary key value" replaying its WAL) and, with frequent
// checkpoints, grew the file until every later write failed with "buffer pool is full".
//
// The journal is a sequence of segment files, `journal-<n>.log`. Each record is
// `[u32 length][u32 crc32][JSON]`, little-endian; a record torn by a crash fails its length or checksum
// and ends the replay (it was never acknowledged: the ack follows the fdatasync). Sealing a segment starts
// the next one, so appends never wait for a copy into the engine; a sealed segment is deleted once its
// rows are committed there. A crash between that commit and the deletion replays rows the engine already
// holds: the graph store skips rows whose primary key it finds.
import { closeSync, fdatasync, fdatasyncSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Cell } from './table-rows.ts';

/** One commit group's rows, table by table, as the cells the engine stores. */
export interface JournalRecord {
  tables: { table: string; rows: Cell[][] }[];
}

const SEGMENT = /^journal-(\d{10})\.log$/;
const HEADER = 8;

export const segmentName = (n: number): string => `journal-${String(n).padStart(10, '0')}.log`;

/** The numbers of the journal's segments in `dir`, oldest first. */
export function segmentsIn(dir: string): number[] {
  return readdirSync(dir)
    .map((f) => SEGMENT.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

export function syncDir(dir: string): void {
  // The new or removed file name must survive a power loss, not only the file's bytes.
  const fd = openSync(dir, 'r');
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The records of one segment, up to the first torn or corrupt one. */
export function readSegment(file: string): JournalRecord[] {
  const bytes = readFileSync(file);
  const records: JournalRecord[] = [];
  let at = 0;
  while (at + HEADER <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    const sum = bytes.readUInt32LE(at + 4);
    const end = at + HEADER + length;
    if (end > bytes.length) break;
    const body = bytes.subarray(at + HEADER, end);
    if (crc32(body) !== sum) break;
    const record = JSON.parse(body.toString('utf8')) as JournalRecord;
    sizes.set(record, end - at);
    records.push(record);
    at = end;
  }
  return records;
}

export function encodeRecord(record: JournalRecord): Buffer {
  // Encoded in place after its header: a 1,000-row record is ~1 MB, not copied a second time.
  const json = JSON.stringify(record);
  const length = Buffer.byteLength(json, 'utf8');
  const bytes = Buffer.allocUnsafe(HEADER + length);
  bytes.write(json, HEADER, 'utf8');
  bytes.writeUInt32LE(length, 0);
  bytes.writeUInt32LE(crc32(bytes.subarray(HEADER)), 4);
  sizes.set(record, bytes.length);
  return bytes;
}

/**
 * Rows a record carries, for the copy thresholds. Tables whose names start with `Holds` or are
 * `TenantSpace` are the store's index of rows by space, written with them: not counted.
 */
const rowsOf = (r: JournalRecord): number =>
  r.tables.reduce(
    (n, t) => n + (t.table === 'TenantSpace' || t.table.startsWith('Holds') || t.table.startsWith('Ident') ? 0 : t.rows.length),
    0,
  );
/** Each record's encoded size, set where it is encoded or read back, for the journal's byte count. */
const sizes = new WeakMap<JournalRecord, number>();

export class WriteJournal {
  readonly #dir: string;
  #fd: number;
  #active: number;
  #activeRecords: JournalRecord[] = [];
  /** Rows of the sealed and active records, kept as they come and go (read on every small commit). */
  #pending = 0;
  /** Their encoded bytes (see `sizes`). */
  #pendingBytes = 0;
  /** Segments sealed but not yet known to be in the engine, oldest first, with their records. */
  #sealed: { n: number; records: JournalRecord[] }[];
  /** The fdatasync in flight: a segment is sealed (its descriptor closed) only after it settles. */
  #syncing: Promise<void> = Promise.resolve();
  /** Set when an fdatasync failed: whether that record reached the disk is unknown, so no more appends. */
  #failed: Error | null = null;
  #closed = false;

  private constructor(dir: string, sealed: { n: number; records: JournalRecord[] }[], next: number) {
    this.#dir = dir;
    this.#sealed = sealed;
    for (const seg of sealed)
      for (const r of seg.records) {
        this.#pending += rowsOf(r);
        this.#pendingBytes += sizes.get(r) ?? 0;
      }
    this.#active = next;
    this.#fd = openSync(join(dir, segmentName(next)), 'a');
    syncDir(dir);
  }

  /**
   * Opens the journal in `dir`: every segment left by an earlier process is sealed, its records waiting to
   * be copied into the engine (`take`), and appends go to a new segment.
   */
  static open(dir: string): WriteJournal {
    const found = segmentsIn(dir);
    const sealed = found.map((n) => ({ n, records: readSegment(join(dir, segmentName(n))) }));
    return new WriteJournal(dir, sealed, (found.at(-1) ?? 0) + 1);
  }

  /** Why no more writes are taken in this process (a failed fdatasync), or null. */
  get failure(): Error | null {
    return this.#failed;
  }

  /** Every record appended or recovered and not yet released, oldest first (read from memory). */
  *records(): Iterable<JournalRecord> {
    for (const seg of this.#sealed) yield* seg.records;
    yield* this.#activeRecords;
  }

  /** Rows appended or recovered and not yet released. */
  get pendingRows(): number {
    return this.#pending;
  }

  /** The encoded bytes of those rows' records. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /**
   * Appends one record and resolves once it is on disk: the caller may acknowledge it then. The fdatasync
   * runs off the main thread, so other requests are planned meanwhile; callers append one at a time (the
   * ledger commits one group at a time). `bytes` is the record as encodeRecord gives it, when the caller
   * has encoded it already.
   */
  async append(record: JournalRecord, bytes: Buffer = encodeRecord(record)): Promise<void> {
    if (this.#closed) throw new Error('write journal is closed');
    if (this.#failed) throw new Error(`write journal unusable after a failed fdatasync (restart the server): ${this.#failed.message}`);
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(this.#fd, bytes, written, bytes.length - written);
    } catch (error) {
      // A partial record ends every replay of this segment at it: nothing may be appended after it.
      this.#failed = error as Error;
      throw error;
    }
    this.#activeRecords.push(record);
    this.#pending += rowsOf(record);
    this.#pendingBytes += bytes.length;
    const fd = this.#fd;
    this.#syncing = new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
    try {
      await this.#syncing;
    } catch (error) {
      // Like a commit whose outcome is unknown: refused to the caller, maybe replayed on the next open. The
      // record leaves the copy queue and every later write in this process is refused (see `failure`), so
      // its sequence numbers are never given to another row here.
      this.#failed = error as Error;
      this.#activeRecords = this.#activeRecords.filter((r) => r !== record);
      this.#pending -= rowsOf(record);
      this.#pendingBytes -= bytes.length;
      throw error;
    }
  }

  /**
   * Seals the active segment (when it holds records) and returns every sealed record, oldest first. The
   * caller copies them into the engine and then calls `release` with the same count; if the copy fails,
   * nothing is released and the next `take` returns them again.
   */
  async take(): Promise<{ records: JournalRecord[]; segments: number }> {
    // An append may start while we wait (its record pushed, its fdatasync in flight on the active
    // descriptor): wait again until no sync is in flight, then seal with no await in between. Sealing
    // under a sync in flight closed its descriptor, failed that write after its record was sealed, and
    // the ledger reused its sequence numbers: a duplicated primary key when both were copied in.
    for (let syncing = this.#syncing; ; syncing = this.#syncing) {
      await syncing.catch(() => undefined);
      if (syncing === this.#syncing) break;
    }
    if (this.#activeRecords.length > 0) {
      closeSync(this.#fd);
      this.#sealed.push({ n: this.#active, records: this.#activeRecords });
      this.#active += 1;
      this.#activeRecords = [];
      this.#fd = openSync(join(this.#dir, segmentName(this.#active)), 'a');
      syncDir(this.#dir);
    }
    return { records: this.#sealed.flatMap((s) => s.records), segments: this.#sealed.length };
  }

  /** Deletes the oldest `segments` sealed segments: their rows are committed in the engine. */
  release(segments: number): void {
    for (const seg of this.#sealed.splice(0, segments)) {
      unlinkSync(join(this.#dir, segmentName(seg.n)));
      for (const r of seg.records) {
        this.#pending -= rowsOf(r);
        this.#pendingBytes -= sizes.get(r) ?? 0;
      }
    }
    syncDir(this.#dir);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#syncing.catch(() => undefined);
    this.#closed = true;
    closeSync(this.#fd);
  }
}
