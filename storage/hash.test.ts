// canonicalJson must give exactly the text the stored content hashes were made from: checked against the
// original replacer-based definition on generated JSON values and on keys whose order JavaScript treats
// specially (array indexes, `__proto__`).
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentHash, recordHasher } from './hash.ts';
import { nodeContentHash } from './log/write-plan.ts';

/** The original definition, kept as the reference. */
function canonicalJsonReference(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const awkwardKey = fc.oneof(
  fc.string(),
  fc.constantFrom(
    '0',
    '1',
    '2',
    '10',
    '01',
    '-1',
    '1.5',
    '4294967294',
    '4294967295',
    '__proto__',
    'constructor',
    '',
    'é',
    '\u0000',
    'Z',
    'a',
  ),
);

describe('canonicalJson', () => {
  it('equals the replacer-based definition on generated JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(v)).toBe(canonicalJsonReference(v));
      }),
      { numRuns: 500 },
    );
  });

  it('equals it on objects with index-like and special keys, parsed from JSON as requests are', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 0 }),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(awkwardKey, tie('node'), { maxKeys: 6 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const parsed: unknown = JSON.parse(JSON.stringify(v));
        expect(canonicalJson(parsed)).toBe(canonicalJsonReference(parsed));
      }),
      { numRuns: 500 },
    );
  });

  it('equals it on values JSON.stringify treats specially', () => {
    const cases: unknown[] = [
      { b: undefined, a: () => 1, c: [undefined, () => 1, Symbol('s'), Number.NaN, -0, Infinity] },
      { d: new Date(0), nested: { z: 1, a: [new Date(1)] } },
      { toJSON: () => ({ b: 1, a: 2 }) },
      Object.assign(Object.create(null) as object, { b: 1, a: null }),
      { s: new String('x'), n: new Number(3) },
      JSON.parse('{"__proto__": {"b": 1, "a": 2}, "10": 1, "9": 2, "x": 3}'),
      [1, , 3], // eslint-disable-line no-sparse-arrays
      'plain',
      3.25,
      null,
      true,
    ];
    for (const v of cases) expect(canonicalJson(v)).toBe(canonicalJsonReference(v));
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
  });
});

/** The hash as it was first defined: a Hash object over the reference text. */
const referenceHash = (value: unknown): string => createHash('sha256').update(canonicalJsonReference(value)).digest('hex');

describe('contentHash and recordHasher', () => {
  const KEYS = ['space', 'kind', 'statement', 'payload', 'asserted_at', 'valid_to', 'fact_value'];
  const hashRecord = recordHasher(KEYS);
  const member = fc.oneof(fc.jsonValue(), fc.constant(undefined));

  it('give the hash the stored rows were made with', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(contentHash(v)).toBe(referenceHash(v));
      }),
      { numRuns: 300 },
    );
    // A node as a 1,000-row import writes it: the plan's hash is the reference hash of its content.
    const node = { kind: 'claim', statement: 'Import 3 note 7 about travel', payload: { b: [1, { y: 2, x: 1 }], a: 'é' } };
    expect(nodeContentHash('import:3', node)).toBe(
      referenceHash({
        space: 'import:3',
        kind: 'claim',
        statement: node.statement,
        category: null,
        payload: node.payload,
        asserted_at: null,
        valid_from: null,
        valid_to: null,
        fact_key: null,
        fact_value: null,
      }),
    );
  });

  it('recordHasher equals contentHash on records of its keys, some absent or undefined', () => {
    const record = fc.record(Object.fromEntries(KEYS.map((k) => [k, member])), { requiredKeys: [] });
    fc.assert(
      fc.property(record, (r) => {
        expect(hashRecord(r)).toBe(referenceHash(r));
      }),
      { numRuns: 500 },
    );
  });

  it('recordHasher falls back to contentHash for other keys and values that are not plain data', () => {
    const extra = { space: 's', kind: 'k', other: 1 };
    expect(hashRecord(extra)).toBe(referenceHash(extra));
    const dated = { space: 's', kind: 'k', payload: { at: new Date(0) } };
    expect(hashRecord(dated)).toBe(referenceHash(dated));
    expect(() => recordHasher(['a', '10'])).toThrow(/index-like/);
  });
});
