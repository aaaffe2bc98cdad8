import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ledger } from '../../log/ledger.ts';
import { LocalEmbedder } from './local-embedder.ts';
import { SearchIndex } from '../search-index.ts';
import { WordVectors } from './word-vectors.ts';
import { wvec } from '../../../test/helpers/word-vectors-file.ts';

const tiny = () =>
  WordVectors.parse(
    wvec([
      ['the', [0, 0, 127]],
      ['cat', [127, 0, 0]],
      ['kitten', [120, 40, 0]],
      ['car', [0, 127, 0]],
    ]),
  );
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);

describe('word vectors', () => {
  it('embeds a text as the mean of its known content words, unit length', () => {
    const w = tiny();
    const cat = w.embed('The cat!');
    expect(dot(cat, cat)).toBeCloseTo(1, 5);
    expect(dot(cat, w.embed('a kitten'))).toBeGreaterThan(dot(cat, w.embed('a car')));
    expect([...w.embed('unknown words only')].every((x) => x === 0)).toBe(true);
  });

  it('gives the cosine of a listed word with each query word in one pass', () => {
    const w = tiny();
    const units = [w.unit('cat')!, w.unit('car')!];
    const out = w.cosinesAt(units, w.indexOf('kitten'), new Float32Array(2));
    expect(out[0]).toBeCloseTo(120 / Math.hypot(120, 40), 5);
    expect(out[1]).toBeCloseTo(40 / Math.hypot(120, 40), 5);
    expect(w.indexOf('dog')).toBe(-1);
    expect(w.unit('dog')).toBeNull();
  });

  it('is absent, not fatal, when the file is missing or malformed', () => {
    expect(WordVectors.load('/nonexistent/word-vectors.bin')).toBeNull();
    expect(() => WordVectors.parse(Buffer.from('nope'))).toThrow();
  });

  it('gives the index a third list that finds a block by a word it does not contain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'word-vectors-'));
    const ledger = await Ledger.open(join(dir, 'data'));
    const index = await SearchIndex.open(join(dir, 'search'), new LocalEmbedder(), ledger, tiny());
    try {
      await ledger.write('t', {
        space: 's',
        nodes: [
          { id: 'k', kind: 'note', statement: 'kitten' },
          { id: 'c', kind: 'note', statement: 'car' },
        ],
        edges: [],
      });
      await index.caughtUp();
      const found = await index.candidates('t', ['cat'], 'cat', { asOf: ledger.now() }, 10);
      expect(found.text).toEqual([]);
      expect(found.words.map((h) => h.id)).toEqual(['k', 'c']);
    } finally {
      await index.close();
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
