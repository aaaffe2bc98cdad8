// The filters of held ids saved by a clean close and taken back by the next open (held-keys.ts). They are
// only ever a cache of what the store says: a saved filter is trusted when the store's latest row
// (instant, seq, tseq: the values an open reads anyway) is the one recorded with it, so any write made
// since, by this program or another, makes the file be ignored, and it is deleted once read either way.
// Rows deleted since (a tenant's deletion, resumed on open) leave a filter holding too many keys, which
// costs lookups, never a wrong answer. Layout: "HKF1", the header's length (u32), the header (JSON: the
// marker, and per tenant its slices' room and count), zero padding to a multiple of 4, then every slice's
// bits as u32 words in the header's order.
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import type { SavedFilter } from './held-keys.ts';

export const HELD_KEYS_FILE = 'held-keys.bin';

/** The store's latest row when the filters were saved. */
export interface StoreMark {
  instant: number;
  seq: number;
  tseq: number;
}

interface Header {
  mark: StoreMark;
  filters: { tenant: string; slices: { room: number; count: number; words: number }[] }[];
}

const MAGIC = Buffer.from('HKF1');

/** Writes the filters beside the store, replacing any saved before (written whole, then renamed into place). */
export function saveHeldKeys(path: string, mark: StoreMark, filters: readonly SavedFilter[]): void {
  const header: Header = {
    mark,
    filters: filters.map((f) => ({
      tenant: f.tenant,
      slices: f.slices.map((s) => ({ room: s.room, count: s.count, words: s.bits.length })),
    })),
  };
  const json = Buffer.from(JSON.stringify(header));
  const head = Buffer.alloc(8 + json.length + ((4 - (json.length % 4)) % 4));
  MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, 4);
  json.copy(head, 8);
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, head);
    for (const f of filters) for (const s of f.slices) writeSync(fd, new Uint8Array(s.bits.buffer, s.bits.byteOffset, s.bits.byteLength));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/**
 * The saved filters if the file was saved when the store's latest row was `mark`, else null (no file, or
 * not readable as one); the file is removed in every case, so what it held is never taken back twice.
 */
export async function takeHeldKeys(path: string, mark: StoreMark): Promise<SavedFilter[] | null> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch {
    return null;
  }
  await rm(path, { force: true });
  if (data.length < 8 || !data.subarray(0, 4).equals(MAGIC)) return null;
  const length = data.readUInt32LE(4);
  let header: Header;
  try {
    header = JSON.parse(data.subarray(8, 8 + length).toString('utf8')) as Header;
  } catch {
    return null;
  }
  if (header.mark?.instant !== mark.instant || header.mark.seq !== mark.seq || header.mark.tseq !== mark.tseq) return null;
  const start = 8 + length + ((4 - (length % 4)) % 4);
  const words = header.filters.reduce((n, f) => n + f.slices.reduce((m, s) => m + s.words, 0), 0);
  if (data.length !== start + 4 * words) return null;
  // Copied into aligned words: the file's buffer may start anywhere.
  const all = new Uint32Array(words);
  new Uint8Array(all.buffer).set(data.subarray(start));
  let at = 0;
  return header.filters.map((f) => ({
    tenant: f.tenant,
    slices: f.slices.map((s) => {
      const bits = all.subarray(at, at + s.words);
      at += s.words;
      return { room: s.room, count: s.count, bits };
    }),
  }));
}
