// Structures built from the store (the filters of held ids, the tables of ids' places) saved by a clean
// close and taken back by the next open. They are only ever a cache of what the store says: a saved file is
// trusted when the store's latest row (instant, seq, tseq: the values an open reads anyway) is the one
// recorded with it, so any write made since, by this program or another, makes the file be ignored, and it
// is deleted once read either way. Layout: four magic bytes, the header's length (u32), the header (JSON:
// the marker, the count of 32-bit words that follow, and what the caller says of them), zero padding to a
// multiple of 4, then the words, little-endian as this machine writes them.
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';

/** The store's latest row when a structure was saved. */
export interface StoreMark {
  instant: number;
  seq: number;
  tseq: number;
}

/** Arrays of 32-bit words, saved one after another. */
export type Words = Uint32Array | Int32Array;

interface Envelope<H> {
  mark: StoreMark;
  words: number;
  body: H;
}

/** Writes `body` and the arrays' words to `path`, replacing any file saved before (written whole, then renamed into place). */
export function saveBesideStore<H>(path: string, magic: string, mark: StoreMark, body: H, arrays: readonly Words[]): void {
  const envelope: Envelope<H> = { mark, words: arrays.reduce((n, a) => n + a.length, 0), body };
  const json = Buffer.from(JSON.stringify(envelope));
  const head = Buffer.alloc(8 + json.length + ((4 - (json.length % 4)) % 4));
  Buffer.from(magic, 'latin1').copy(head, 0, 0, 4);
  head.writeUInt32LE(json.length, 4);
  json.copy(head, 8);
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, head);
    for (const a of arrays) writeSync(fd, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/**
 * The body and the words saved in `path` when the store's latest row was `mark`, else null (no file, or not
 * readable as one with this magic); the file is removed in every case, so what it held is never taken back twice.
 */
export async function takeBesideStore<H>(path: string, magic: string, mark: StoreMark): Promise<{ body: H; words: Uint32Array } | null> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch {
    return null;
  }
  await rm(path, { force: true });
  if (data.length < 8 || data.toString('latin1', 0, 4) !== magic) return null;
  const length = data.readUInt32LE(4);
  let envelope: Envelope<H>;
  try {
    envelope = JSON.parse(data.subarray(8, 8 + length).toString('utf8')) as Envelope<H>;
  } catch {
    return null;
  }
  if (envelope.mark?.instant !== mark.instant || envelope.mark.seq !== mark.seq || envelope.mark.tseq !== mark.tseq) return null;
  const start = 8 + length + ((4 - (length % 4)) % 4);
  if (!Number.isInteger(envelope.words) || data.length !== start + 4 * envelope.words) return null;
  // A view of the file's buffer when its words are aligned (a large file's buffer is its own), else copied
  // into aligned words: at 3M rows the copy was a tenth of a start's CPU.
  if ((data.byteOffset + start) % 4 === 0)
    return { body: envelope.body, words: new Uint32Array(data.buffer, data.byteOffset + start, envelope.words) };
  const words = new Uint32Array(envelope.words);
  new Uint8Array(words.buffer).set(data.subarray(start));
  return { body: envelope.body, words };
}
