import { describe, expect, it } from 'vitest';
import { embedBatch } from './embed-batch.ts';
import { embedLocal, LOCAL_DIMENSION } from './local-embedder.ts';
import { normalise } from './embedder.ts';
import { STOP_WORDS, stem, stripSuffix, words as splitWords } from './text-features.ts';
import { WordVectors } from './word-vectors.ts';
import { wvec } from '../../../test/helpers/word-vectors-file.ts';

let seed = 11;
const rand = (): number => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 4294967296;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const VOCAB = [
  'cat',
  'cats',
  'kitten',
  'painted',
  'painting',
  'studies',
  'the',
  'of',
  'rock’n’roll',
  "it's",
  'Ünïcode',
  'ΑΒΓ',
  '42',
  'nationalization',
  'happily',
  'boxes',
  'hopped',
];
const randomText = (): string =>
  Array.from({ length: Math.floor(rand() * 20) }, () => pick(VOCAB) + pick([' ', ', ', '! ', ' — '])).join('');

describe('batch embedding', () => {
  it('gives each text the vectors embedLocal and WordVectors.embed give it alone, bit for bit', () => {
    const words = WordVectors.parse(
      wvec([
        ['cat', [127, 0, 3]],
        ['kitten', [120, 40, -7]],
        ['painting', [0, 127, 1]],
        ['42', [-5, 9, 100]],
      ]),
    );
    const texts = Array.from({ length: 300 }, randomText);
    const { local, wvecs } = embedBatch(texts, true, words);
    texts.forEach((text, i) => {
      expect([...local!.subarray(i * LOCAL_DIMENSION, (i + 1) * LOCAL_DIMENSION)]).toEqual([...embedLocal(text)]);
      expect([...wvecs!.subarray(i * 3, (i + 1) * 3)]).toEqual([...words.embed(text)]);
    });
    expect(embedBatch(texts, false, null)).toEqual({ local: null, wvecs: null });
  });

  it('sums word vectors word by word in text order, however many words a text has', () => {
    const vocab = Array.from({ length: 40 }, (_, i) => `w${i}`);
    const words = WordVectors.parse(wvec(vocab.map((w) => [w, Array.from({ length: 5 }, () => Math.floor(rand() * 255) - 127)])));
    const { vectors, dimension } = words.parts();
    const reference = (text: string): Float32Array => {
      const v = new Float32Array(dimension);
      for (const w of splitWords(text)) {
        const i = words.indexOf(w);
        if (STOP_WORDS.has(w) || i < 0) continue;
        for (let k = 0; k < dimension; k++) v[k] = v[k]! + words.weight(w) * vectors[i * dimension + k]!;
      }
      return normalise(v);
    };
    for (const length of [0, 1, 3, 4, 5, 8, 63, 64, 65, 130, 300]) {
      const text = Array.from({ length }, () => pick([...vocab, 'the', 'unknown'])).join(' ');
      expect([...words.embed(text)]).toEqual([...reference(text)]);
    }
  });

  it('stems every word as the suffix loop alone did', () => {
    const letters = 'abcdeilnsgytz';
    for (let n = 0; n < 20_000; n++) {
      const word =
        Array.from({ length: 1 + Math.floor(rand() * 10) }, () => pick([...letters])).join('') +
        pick(['', 's', 'ed', 'ing', 'ly', 'ies', 'es', 'edly', 'ational', 'ization']);
      expect(stem(word)).toBe(word.length <= 4 ? word : stripSuffix(word));
    }
  });
});
