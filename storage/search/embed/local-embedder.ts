// The default embedder: deterministic feature hashing, no model and no download. Word unigrams (stemmed,
// stop words dropped), word bigrams and character trigrams are hashed into 384 signed buckets and the
// vector is L2-normalised, so cosine similarity rewards shared words, phrases and word pieces.
import { normalise, type Embedder } from './embedder.ts';
import { STOP_WORDS, stem, words } from './text-features.ts';

/** Fixed: `add` reduces hashes modulo 384 by its factors. */
export const LOCAL_DIMENSION = 384;

// Features are hashed straight from character codes (no feature strings are built): this runs per row
// on the write path, and string building was most of its cost.
const OFFSET = 0x811c9dc5;
const PRIME = 0x01000193;

function hashWord(w: string, seed: number): number {
  let h = OFFSET ^ seed;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), PRIME);
  return h >>> 0;
}

function mix(a: number, b: number): number {
  let h = Math.imul(a ^ (b >>> 16), 0x85ebca6b) ^ b;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

// h % 384 of an unsigned 32-bit h, in 32-bit integer arithmetic: as a number above 2^31 the plain `%`
// is a floating-point remainder, which was most of this function's cost. With h = 128q + r (r < 128),
// h mod 384 = 128 (q mod 3) + r, since 384 = 3 * 128.
function add(v: Float32Array, h: number, weight: number): void {
  const i = (((h >>> 7) % 3) << 7) | (h & 127);
  v[i] = v[i]! + ((h & 0x80000000) === 0 ? weight : -weight);
}

/** Character trigrams of `<word>`, boundaries included, hashed from codes. */
function addTrigrams(v: Float32Array, w: string, weight: number): void {
  // Slides over `<` + w + `>` keeping the last three codes, so no padded string is built.
  let a = 60;
  let b = w.length > 0 ? w.charCodeAt(0) : 62;
  for (let i = 1; i <= w.length; i++) {
    const c = i < w.length ? w.charCodeAt(i) : 62;
    let h = OFFSET ^ 3;
    h = Math.imul(h ^ a, PRIME);
    h = Math.imul(h ^ b, PRIME);
    h = Math.imul(h ^ c, PRIME);
    add(v, h >>> 0, weight);
    a = b;
    b = c;
  }
}

/** `into` (zero-filled, LOCAL_DIMENSION long) receives the vector when given. */
export function embedLocal(text: string, into?: Float32Array): Float32Array {
  return embedLocalWords(words(text), into);
}

/** embedLocal of a text already split by `words` (a batch splits each text once for both embedders). */
export function embedLocalWords(ws: readonly string[], into?: Float32Array): Float32Array {
  const v = into ?? new Float32Array(LOCAL_DIMENSION);
  let prev = -1;
  let content = 0;
  for (const w of ws) {
    if (STOP_WORDS.has(w)) continue;
    content++;
    const u = hashWord(stem(w), 1);
    add(v, u, 1);
    addTrigrams(v, w, 0.25);
    if (prev >= 0) add(v, mix(prev, u), 0.5);
    prev = u;
  }
  if (content === 0) for (const w of ws) add(v, hashWord(w, 1), 1);
  return normalise(v);
}

export class LocalEmbedder implements Embedder {
  readonly id = 'local';
  dimension(): number {
    return LOCAL_DIMENSION;
  }
  async ready(): Promise<void> {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    // One buffer for the whole batch, rows as views into it: no per-row allocation, and the index hands
    // the buffer to Arrow as the vector column without copying it.
    const flat = new Float32Array(texts.length * LOCAL_DIMENSION);
    return texts.map((t, i) => embedLocal(t, flat.subarray(i * LOCAL_DIMENSION, (i + 1) * LOCAL_DIMENSION)));
  }
}
