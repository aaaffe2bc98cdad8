import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatInstant, OPEN_END, parseInstant } from '../time.ts';
import type { BatchRow, Declaration, EdgeRecord, NodeVersion, Verdict } from '../types.ts';
import {
  bundleEdge,
  bundleInstant,
  bundleNode,
  bundleResolution,
  edgeLine,
  edgeRecordOf,
  InstantFormatter,
  nodeLine,
  nodeVersionOf,
  verdictOf,
} from './rows.ts';
import { bundleStem, factsInForce } from './writer.ts';

const us = (iso: string): number => parseInstant(iso);
const batch: BatchRow = {
  tenant: 't',
  id: 'batch-1',
  declared_captured_at: us('2023-05-01T12:00:00.000001Z'),
  reason: 'crm import',
  captured_at: us('2024-06-01T00:00:00.000002Z'),
  tseq: 0,
};
const batches = new Map([[batch.id, batch]]);

const node: NodeVersion = {
  seq: 7,
  tseq: 7,
  tenant: 't',
  id: 'n1',
  space: 'user:1',
  kind: 'custom-kind',
  statement: null,
  category: 'econ',
  payload: '{"a":[1,{"b":null}]}',
  asserted_at: us('2023-04-01T00:00:00.000003Z'),
  valid_from: us('2023-04-02T00:00:00Z'),
  valid_to: OPEN_END,
  captured_at: batch.captured_at,
  known_at: batch.declared_captured_at,
  batch_id: batch.id,
  fact_key: 'k',
  fact_value: '{"v":1}',
  hash: 'h',
};

describe('bundle rows', () => {
  it('a node survives the trip to a bundle row and back, microseconds included', () => {
    const row = bundleNode(node, batches);
    expect(row).toEqual({
      id: 'n1',
      kind: 'custom-kind',
      space: 'user:1',
      statement: null,
      category: 'econ',
      payload: { a: [1, { b: null }] },
      asserted_at: '2023-04-01T00:00:00.000003Z',
      valid_from: '2023-04-02T00:00:00.000000Z',
      valid_to: null,
      known_at: '2023-05-01T12:00:00.000001Z',
      fact_key: 'k',
      fact_value: { v: 1 },
      attestation: {
        captured_at: '2024-06-01T00:00:00.000002Z',
        batch: { id: 'batch-1', declared_captured_at: '2023-05-01T12:00:00.000001Z', reason: 'crm import' },
      },
    });
    expect(nodeVersionOf(JSON.parse(JSON.stringify(row)), 't', 7)).toEqual({ ...node, hash: '' });
  });

  it('a node without a batch is attested by its capture alone; fact_value false and 0 are kept', () => {
    const plain = { ...node, batch_id: null, known_at: node.captured_at, fact_value: 'false', valid_to: us('2025-01-01T00:00:00Z') };
    const row = bundleNode(plain, batches);
    expect(row.attestation).toEqual({ captured_at: row.known_at, batch: null });
    expect(row.fact_value).toBe(false);
    expect(row.valid_to).toBe('2025-01-01T00:00:00.000000Z');
    expect(nodeVersionOf(row, 't', 7)).toEqual({ ...plain, hash: '' });
  });

  it('an edge and a verdict survive the trip', () => {
    const edge: EdgeRecord = {
      seq: 3,
      tseq: 3,
      tenant: 't',
      source_id: 'a',
      target_id: 'b',
      edge_type: 'CAUSES',
      confidence: 0.5,
      lag: 'P1DT12H',
      mechanism: 'm',
      space: 's',
      asserted_at: us('2024-01-01T00:00:00Z'),
      valid_from: us('2024-01-01T00:00:00Z'),
      valid_to: OPEN_END,
      captured_at: us('2024-02-01T00:00:00Z'),
      known_at: us('2024-02-01T00:00:00Z'),
      batch_id: null,
      hash: 'h',
    };
    expect(edgeRecordOf(bundleEdge(edge, batches), 't', 3)).toEqual({ ...edge, hash: '' });
    const verdict: Verdict = {
      seq: 9,
      tseq: 9,
      tenant: 't',
      fact_key: 'rate',
      target_id: 'n3',
      value: '4.75',
      outcome: 'answered',
      method: 'latest_valid',
      ruleset: '{"policy":"latest_valid"}',
      resolver: 'ledger',
      decided_at: us('2024-07-01T00:00:00Z'),
      known_at: us('2024-07-01T00:00:00Z'),
      space: null,
      hash: 'h',
    };
    const row = bundleResolution(verdict);
    expect(row).toMatchObject({
      target_id: 'n3',
      value: 4.75,
      ruleset: { policy: 'latest_valid' },
      attestation: { captured_at: '2024-07-01T00:00:00.000000Z', batch: null },
    });
    expect(verdictOf(row, 't', 9)).toEqual({ ...verdict, hash: '' });
  });
});

describe("the writer's text lines", () => {
  it('InstantFormatter formats as formatInstant, across days, before 1970 and at microsecond edges', () => {
    const f = new InstantFormatter();
    const min = parseInstant('1700-01-01T00:00:00Z'),
      max = parseInstant('2199-12-31T23:59:59.999999Z');
    fc.assert(
      fc.property(fc.array(fc.integer({ min, max }), { minLength: 1, maxLength: 20 }), (xs) => {
        for (const x of [...xs, ...xs.map((v) => v - (v % 86_400_000_000)), ...xs.map((v) => v + 1)]) {
          if (x <= max) expect(f.format(x)).toBe(formatInstant(x));
        }
      }),
    );
    expect(f.end(OPEN_END)).toBeNull();
  });

  it('bundleInstant reads what formatInstant writes, and anything else as parseInstant does', () => {
    const min = parseInstant('1700-01-01T00:00:00Z'),
      max = parseInstant('2199-12-31T23:59:59.999999Z');
    fc.assert(
      fc.property(fc.integer({ min, max }), (x) => {
        expect(bundleInstant(formatInstant(x))).toBe(x);
      }),
    );
    expect(bundleInstant('2024-03-01T01:00:00+01:00')).toBe(parseInstant('2024-03-01T00:00:00Z'));
    expect(() => bundleInstant('2024-02-30T00:00:00.000000Z')).toThrow(RangeError);
    expect(() => bundleInstant('2024-03-01T24:00:00.000000Z')).toThrow(RangeError);
    expect(() => bundleInstant(undefined as unknown as string)).toThrow(RangeError);
  });

  it('node and edge lines hold exactly the row of bundleNode / bundleEdge, quotes and unicode included', () => {
    const f = new InstantFormatter();
    const odd = {
      ...node,
      id: 'a"b\\c\u2028',
      statement: 'line\nbreak "quoted"',
      category: null,
      fact_key: null,
      fact_value: null,
      payload: '{"k":"\u00e9\\n"}',
    };
    for (const n of [node, odd]) expect(JSON.parse(nodeLine(n, batches, f))).toEqual(bundleNode(n, batches));
    const edge: EdgeRecord = {
      seq: 3,
      tseq: 3,
      tenant: 't',
      source_id: 'a',
      target_id: 'b"',
      edge_type: 'CAUSES',
      confidence: 0.25,
      lag: 'P3D',
      mechanism: null,
      space: 's',
      asserted_at: us('1969-12-31T23:59:59.999999Z'),
      valid_from: us('2024-01-01T00:00:00Z'),
      valid_to: us('2024-02-01T00:00:00Z'),
      captured_at: batch.captured_at,
      known_at: batch.declared_captured_at,
      batch_id: 'batch-1',
      hash: 'h',
    };
    expect(JSON.parse(edgeLine(edge, batches, f))).toEqual(bundleEdge(edge, batches));
    expect(nodeLine(node, batches, f).endsWith('}\n')).toBe(true);
  });
});

describe('bundle naming and declarations', () => {
  it('names the file ledger-<tenant>[-<space>]-<as_of compact> with characters a file system refuses replaced', () => {
    const asOf = us('2024-03-01T23:59:59.999999Z');
    expect(bundleStem('alpha', { asOf })).toBe('ledger-alpha-20240301T235959999999Z');
    expect(bundleStem('alpha', { asOf, space: 'user:42/../x' })).toBe('ledger-alpha-user_42_.._x-20240301T235959999999Z');
    expect(bundleStem('..', { asOf, space: '' })).toBe('ledger-_-_-20240301T235959999999Z');
  });

  it('facts in force: the latest declaration of each key made by as_of', () => {
    const d = (seq: number, key: string, at: string, policy: Declaration['policy']): Declaration => ({
      seq,
      tseq: seq,
      tenant: 't',
      fact_key: key,
      key_fields: [],
      policy,
      source_order: null,
      declared_at: us(at),
    });
    const all = [
      d(1, 'a', '2024-01-01T00:00:00Z', 'latest_valid'),
      d(2, 'b', '2024-02-01T00:00:00Z', 'strict'),
      d(3, 'a', '2024-03-01T00:00:00Z', 'strict'),
    ];
    expect(factsInForce(all, us('2023-12-31T00:00:00Z'))).toEqual([]);
    expect(factsInForce(all, us('2024-02-01T00:00:00Z')).map((x) => [x.fact_key, x.policy])).toEqual([
      ['a', 'latest_valid'],
      ['b', 'strict'],
    ]);
    expect(factsInForce(all, us('2024-03-01T00:00:00Z')).map((x) => [x.fact_key, x.policy])).toEqual([
      ['b', 'strict'],
      ['a', 'strict'],
    ]);
  });
});
