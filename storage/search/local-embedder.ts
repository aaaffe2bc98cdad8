// The default embedder: deterministic feature hashing, no model and no download. Word unigrams (stemmed,
// stop words dropped), word bigrams and character trigrams are hashed into 384 signed buckets and the
// vector is L2-normalised, so cosine similarity rewards shared words, phrases and word pieces.
import { normalise, type Embedder } from './embedder.ts';
import { STOP_WORDS, stem, words } from './text-features.ts';

export const LOCAL_DIMENSION = 384;

function fnv1a(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function add(v: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature, 0);
  v[h % LOCAL_DIMENSION] = (v[h % LOCAL_DIMENSION] ?? 0) + ((h & 0x80000000) === 0 ? weight : -weight);
}

export function embedLocal(text: string): Float32Array {
  const v = new Float32Array(LOCAL_DIMENSION);
  const ws = words(text);
  const content = ws.filter((w) => !STOP_WORDS.has(w));
  for (const w of content) {
    add(v, `u:${stem(w)}`, 1);
    const padded = `<${w}>`;
    for (let i = 0; i + 3 <= padded.length; i++) add(v, `c:${padded.slice(i, i + 3)}`, 0.25);
  }
  for (let i = 0; i + 1 < content.length; i++) add(v, `b:${stem(content[i] ?? '')} ${stem(content[i + 1] ?? '')}`, 0.5);
  if (content.length === 0) for (const w of ws) add(v, `u:${w}`, 1);
  return normalise(v);
}

export class LocalEmbedder implements Embedder {
  readonly id = 'local';
  dimension(): number {
    return LOCAL_DIMENSION;
  }
  async ready(): Promise<void> {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map(embedLocal);
  }
}
