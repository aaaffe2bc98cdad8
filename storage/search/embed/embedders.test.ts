import { MockEmbeddingModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { embedLocal, LOCAL_DIMENSION, LocalEmbedder } from './local-embedder.ts';
import { OpenAIEmbedder } from './openai-embedder.ts';

const norm = (v: Float32Array): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cos = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);

describe('local embedder', () => {
  it('is deterministic, 384 dimensions, unit length', async () => {
    const e = new LocalEmbedder();
    const [a, b] = await e.embed(['Heavy rainfall flooded the rail line', 'Heavy rainfall flooded the rail line']);
    expect(e.id).toBe('local');
    expect(a).toHaveLength(LOCAL_DIMENSION);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(norm(a!)).toBeCloseTo(1, 5);
  });

  it('puts texts sharing words closer than unrelated ones', () => {
    const q = embedLocal('rainfall flooded rail');
    expect(cos(q, embedLocal('Heavy rainfall flooded the northern rail line'))).toBeGreaterThan(
      cos(q, embedLocal('Quarterly earnings beat expectations')),
    );
  });

  it('matches word forms through stems and character trigrams', () => {
    const q = embedLocal('painting');
    expect(cos(q, embedLocal('she painted a sunrise'))).toBeGreaterThan(cos(q, embedLocal('she cooked a dinner')));
  });

  it('embeds any script and punctuation without throwing; empty text is a zero vector', () => {
    for (const t of ['東京の天気', 'حرارة', '¿Qué tal?', '"); DROP TABLE x; --', '*:~^()[]{}', '👍🏽', '']) {
      const v = embedLocal(t);
      expect(v).toHaveLength(LOCAL_DIMENSION);
      expect(Number.isFinite(norm(v))).toBe(true);
    }
    expect(norm(embedLocal(''))).toBe(0);
    expect(norm(embedLocal('東京の天気'))).toBeCloseTo(1, 5);
  });
});

describe('openai embedder (AI SDK mock model, no network)', () => {
  const model = (dim: number) =>
    new MockEmbeddingModelV3({
      doEmbed: async ({ values }) => ({
        embeddings: values.map((v) => Array.from({ length: dim }, (_, i) => (i === v.length % dim ? 3 : 0))),
        warnings: [],
      }),
    });

  it('learns the dimension from a probe, normalises, keeps order, records its id', async () => {
    const m = model(8);
    const e = new OpenAIEmbedder(m, 'text-embedding-3-small');
    expect(() => e.dimension()).toThrow(/dimension unknown/);
    await e.ready();
    expect(e.dimension()).toBe(8);
    expect(e.id).toBe('openai:text-embedding-3-small');
    const [a, b] = await e.embed(['ab', 'abc']);
    expect(Array.from(a!)).toEqual([0, 0, 1, 0, 0, 0, 0, 0]);
    expect(Array.from(b!)).toEqual([0, 0, 0, 1, 0, 0, 0, 0]);
    expect(m.doEmbedCalls.flatMap((c) => c.values).slice(-2)).toEqual(['ab', 'abc']);
  });

  it('sends blank texts as a space and batches large inputs', async () => {
    const m = model(4);
    const e = new OpenAIEmbedder(m, 'm');
    const out = await e.embed(['', ...Array.from({ length: 300 }, (_, i) => `t${i}`)]);
    expect(out).toHaveLength(301);
    expect(m.doEmbedCalls[0]?.values[0]).toBe(' ');
    expect(m.doEmbedCalls.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses a model whose vectors change length', async () => {
    let dim = 4;
    const m = new MockEmbeddingModelV3({
      doEmbed: async ({ values }) => ({ embeddings: values.map(() => Array.from({ length: dim++ }, () => 1)), warnings: [] }),
    });
    const e = new OpenAIEmbedder(m, 'm');
    await e.ready();
    await expect(e.embed(['x'])).rejects.toThrow(/expected 4/);
  });
});
