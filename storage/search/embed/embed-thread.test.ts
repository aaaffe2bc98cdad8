// The embedding thread gives the vectors the main thread would, bit for bit, and a search index whose
// batches go through it finds what one embedding inline finds.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EmbedThread } from './embed-thread.ts';
import { LocalEmbedder } from './local-embedder.ts';
import { WordVectors } from './word-vectors.ts';

const synthetic = (): WordVectors => {
  const words = ['the', 'cat', 'kitten', 'car', 'painting', 'watercolour', 'été', '漢字'];
  const dimension = 5;
  const vectors = Int8Array.from({ length: words.length * dimension }, (_, i) => ((i * 37) % 255) - 127);
  return WordVectors.fromParts({ words, dimension, vectors });
};

const TEXTS = [
  'The cat sat on the painting',
  'a kitten! a car? watercolour, été',
  '',
  'only unknown tokens here',
  '漢字 and ÉTÉ with "quotes" and new\nlines',
  'the the the',
];

describe('the embedding thread', () => {
  it('returns the local and word vectors the main thread computes, bit for bit', async () => {
    const words = synthetic();
    const thread = EmbedThread.start(true, words);
    try {
      const texts = Array.from({ length: 300 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${i}`);
      const got = await thread.embed(texts);
      const local = await new LocalEmbedder().embed(texts);
      expect(got.local?.length).toBe(texts.length);
      expect(got.wvecs?.length).toBe(texts.length);
      texts.forEach((t, i) => {
        expect([...got.local![i]!]).toEqual([...local[i]!]);
        expect([...got.wvecs![i]!]).toEqual([...words.embed(t)]);
      });
      // Batches in flight at once come back to their own callers.
      const [a, b] = await Promise.all([thread.embed(['cat']), thread.embed(['car', 'kitten'])]);
      expect([...a.wvecs![0]!]).toEqual([...words.embed('cat')]);
      expect(b.wvecs!.map((v) => [...v])).toEqual([[...words.embed('car')], [...words.embed('kitten')]]);
    } finally {
      await thread.close();
    }
  });

  it('computes only the word vectors for a remote embedder, and refuses batches once closed', async () => {
    const thread = EmbedThread.start(false, synthetic());
    const got = await thread.embed(['cat']);
    expect(got.local).toBeNull();
    expect(got.wvecs?.length).toBe(1);
    await thread.close();
    expect(thread.failure).not.toBeNull();
    await expect(thread.embed(['cat'])).rejects.toThrow(/closed/);
  });

  it.runIf(existsSync('/proc/self/task'))("runs at SVC_INDEX_NICE, like the index's other threads", async () => {
    const niceOf = (task: string): number => {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const before = readdirSync('/proc/self/task').filter((t) => niceOf(t) === 9).length;
    const saved = process.env.SVC_INDEX_NICE;
    process.env.SVC_INDEX_NICE = '9';
    const thread = EmbedThread.start(true, null);
    try {
      await thread.embed(['warm']);
      expect(readdirSync('/proc/self/task').filter((t) => niceOf(t) === 9).length).toBe(before + 1);
    } finally {
      if (saved === undefined) delete process.env.SVC_INDEX_NICE;
      else process.env.SVC_INDEX_NICE = saved;
      await thread.close();
    }
  });
});
