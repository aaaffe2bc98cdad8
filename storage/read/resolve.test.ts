import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reference } from '../../test/helpers/resolve-reference.ts';
import { nodeVersion } from '../../test/helpers/rows.ts';
import { choose, decide, REASONS, sourceOf, type Reason } from './resolve.ts';
import { OPEN_END } from '../time.ts';
import { POLICIES, type Declaration, type NodeVersion, type Policy } from '../types.ts';

let seq = 0;
function row(over: Partial<NodeVersion> & { id: string }): NodeVersion {
  const t = over.asserted_at ?? 100;
  ++seq;
  return nodeVersion({
    seq,
    asserted_at: t,
    valid_from: t,
    captured_at: 1_000,
    known_at: 1_000,
    fact_key: 'f',
    fact_value: JSON.stringify(over.id),
    hash: `h-${over.id}-${seq}`,
    ...over,
  });
}

function decl(policy: Policy, source_order: string[] | null = null): Declaration {
  const n = ++seq;
  return { seq: n, tseq: n, tenant: 't', fact_key: 'f', key_fields: [], policy, source_order, declared_at: 0 };
}

const ORDER = ['gold', 'silver'];

// For every policy, one history that ends in each reason (null: answered) and what it must answer.
interface Case {
  reason: Reason | null;
  rows: NodeVersion[];
  asOf: number;
  validAt?: number;
  undeclared?: boolean;
  /** id of the expected answer */
  answer?: string;
}

function casesFor(policy: Policy): Case[] {
  const one = [row({ id: 'a', asserted_at: 100, known_at: 500, space: 'gold' })];
  // Two candidates the policy cannot tell apart.
  const tie: Record<Policy, NodeVersion[]> = {
    latest_valid: [row({ id: 'a', asserted_at: 100, valid_from: 200 }), row({ id: 'b', asserted_at: 150, valid_from: 200 })],
    latest_observed: [row({ id: 'a', asserted_at: 100, valid_from: 110 }), row({ id: 'b', asserted_at: 100, valid_from: 300 })],
    source_priority: [
      row({ id: 'a', space: 'gold', valid_from: 200 }),
      row({ id: 'b', payload: '{"source":"gold"}', space: 'x', valid_from: 200 }),
    ],
    strict: [row({ id: 'a', asserted_at: 100 }), row({ id: 'b', asserted_at: 900 })],
  };
  // Two candidates the policy orders; `b` wins (strict answers only a single candidate).
  const win: Record<Policy, NodeVersion[]> = {
    latest_valid: [row({ id: 'a', asserted_at: 300, valid_from: 100 }), row({ id: 'b', asserted_at: 50, valid_from: 200 })],
    latest_observed: [row({ id: 'a', asserted_at: 100, valid_from: 500 }), row({ id: 'b', asserted_at: 200, valid_from: 150 })],
    source_priority: [row({ id: 'a', space: 'silver', valid_from: 900 }), row({ id: 'b', space: 'gold', valid_from: 100 })],
    strict: [row({ id: 'b', asserted_at: 100 })],
  };
  return [
    { reason: 'undeclared_fact', rows: one, asOf: 1_000, undeclared: true },
    { reason: 'no_data', rows: [], asOf: 1_000 },
    { reason: 'not_yet', rows: one, asOf: 499 },
    { reason: 'no_value_at', rows: [row({ id: 'a', asserted_at: 100, valid_to: 200 })], asOf: 1_000, validAt: 200 },
    { reason: 'unresolved_conflict', rows: tie[policy], asOf: 1_000 },
    { reason: null, rows: win[policy], asOf: 1_000, answer: 'b' },
  ];
}

describe('resolve: every policy × every reason', () => {
  for (const policy of POLICIES) {
    for (const c of casesFor(policy)) {
      it(`${policy}: ${c.reason ?? 'answered'}`, () => {
        const d = decide(c.undeclared ? null : decl(policy, ORDER), c.rows, { asOf: c.asOf, validAt: c.validAt });
        expect(d.reason).toBe(c.reason);
        expect(d.chosen?.id ?? null).toBe(c.answer ?? null);
        if (c.reason === 'unresolved_conflict') expect(d.candidates).toHaveLength(2);
      });
    }
  }
  it('covers all five reasons', () => {
    expect(
      new Set(
        casesFor('strict')
          .map((c) => c.reason)
          .filter(Boolean),
      ),
    ).toEqual(new Set(REASONS));
  });
});

describe('resolve: precedence of reasons', () => {
  const late = row({ id: 'late', asserted_at: 100, known_at: 900, valid_to: 150 });
  it('undeclared_fact before no_data', () => {
    expect(decide(null, [], { asOf: 1_000 }).reason).toBe('undeclared_fact');
  });
  it('not_yet before no_value_at: nothing known, and nothing in force either', () => {
    expect(decide(decl('latest_valid'), [late], { asOf: 800, validAt: 500 }).reason).toBe('not_yet');
    expect(decide(decl('latest_valid'), [late], { asOf: 900, validAt: 500 }).reason).toBe('no_value_at');
  });
  it('no_value_at before unresolved_conflict', () => {
    const rows = [row({ id: 'a', asserted_at: 100, valid_to: 200 }), row({ id: 'b', asserted_at: 100, valid_to: 200 })];
    expect(decide(decl('strict'), rows, { asOf: 1_000, validAt: 300 }).reason).toBe('no_value_at');
    expect(decide(decl('strict'), rows, { asOf: 1_000, validAt: 150 }).reason).toBe('unresolved_conflict');
  });
  it('counts the rows as_of hid', () => {
    expect(decide(decl('latest_valid'), [late, row({ id: 'x', known_at: 100 })], { asOf: 800 }).masked).toBe(1);
  });
});

describe('resolve: valid_at boundaries', () => {
  // One id, two versions: [100, 200) says "old", [200, open) says "new".
  const v1 = row({ id: 'rate', asserted_at: 100, valid_to: 200, fact_value: '"old"' });
  const v2 = row({ id: 'rate', asserted_at: 150, valid_from: 200, fact_value: '"new"' });
  const at = (validAt: number | undefined) => decide(decl('strict'), [v1, v2], { asOf: 1_000, validAt });
  it('each version is its own candidate', () => {
    expect(at(undefined).reason).toBe('unresolved_conflict');
    expect(at(undefined).candidates).toHaveLength(2);
  });
  it('valid_from is inclusive, valid_to exclusive', () => {
    expect(at(100).chosen?.fact_value).toBe('"old"');
    expect(at(199).chosen?.fact_value).toBe('"old"');
    expect(at(200).chosen?.fact_value).toBe('"new"');
    expect(at(99).reason).toBe('no_value_at');
  });
  it('a candidate is not in force before it was asserted, even if valid from earlier', () => {
    const late = row({ id: 'l', asserted_at: 500, valid_from: 100 });
    expect(decide(decl('latest_valid'), [late], { asOf: 1_000, validAt: 499 }).reason).toBe('no_value_at');
    expect(decide(decl('latest_valid'), [late], { asOf: 1_000, validAt: 500 }).chosen?.id).toBe('l');
  });
  it('without valid_at a closed interval still competes (answers replay the same at any wall-clock time)', () => {
    const closed = row({ id: 'closed', asserted_at: 300, valid_to: 400 });
    const open = row({ id: 'open', asserted_at: 100 });
    expect(decide(decl('latest_valid'), [open, closed], { asOf: 1_000 }).chosen?.id).toBe('closed');
    expect(decide(decl('latest_valid'), [open, closed], { asOf: 1_000, validAt: 450 }).chosen?.id).toBe('open');
  });
});

describe('source_priority', () => {
  const pick = (rows: NodeVersion[]) => choose('source_priority', ORDER, rows)?.id ?? null;
  it('payload.source wins over space; an empty or non-string source falls back to the space', () => {
    expect(sourceOf(row({ id: 'a', payload: '{"source":"gold"}', space: 'silver' }))).toBe('gold');
    expect(sourceOf(row({ id: 'a', payload: '{"source":""}', space: 'silver' }))).toBe('silver');
    expect(sourceOf(row({ id: 'a', payload: '{"source":7}', space: 'silver' }))).toBe('silver');
  });
  it('listed before unlisted; within one source the later validity start', () => {
    expect(pick([row({ id: 'u', space: 'other', valid_from: 999 }), row({ id: 's', space: 'silver' })])).toBe('s');
    expect(pick([row({ id: 'g1', space: 'gold', valid_from: 100 }), row({ id: 'g2', space: 'gold', valid_from: 300 })])).toBe('g2');
  });
  it('two different unlisted sources cannot be ordered; a single unlisted one answers', () => {
    expect(pick([row({ id: 'u1', space: 'x', valid_from: 100 }), row({ id: 'u2', space: 'y', valid_from: 300 })])).toBeNull();
    expect(pick([row({ id: 'u1', space: 'x' })])).toBe('u1');
    expect(pick([row({ id: 'u1', space: 'x', valid_from: 100 }), row({ id: 'u2', space: 'x', valid_from: 300 })])).toBe('u2');
  });
});

// ---- property: decide agrees with an independent reference ------------------------------------------

const SPACES = ['gold', 'silver', 'bronze', 'lead'];

const historyArb = fc.record({
  rows: fc.array(
    fc.record({
      asserted: fc.integer({ min: 0, max: 20 }),
      validDelta: fc.integer({ min: 0, max: 5 }),
      length: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
      known: fc.integer({ min: 0, max: 20 }),
      space: fc.constantFrom(...SPACES),
      source: fc.option(fc.constantFrom(...SPACES), { nil: undefined }),
      value: fc.integer({ min: 0, max: 3 }),
    }),
    { maxLength: 8 },
  ),
  policy: fc.option(fc.constantFrom(...POLICIES), { nil: undefined }),
  order: fc.shuffledSubarray(SPACES, { minLength: 1 }),
  asOf: fc.integer({ min: 0, max: 22 }),
  validAt: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
});

describe('resolve: property', () => {
  it('agrees with the reference on random fact histories', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const rows = h.rows.map((r, i) =>
          row({
            id: `n${i}`,
            asserted_at: r.asserted,
            valid_from: r.asserted + r.validDelta,
            valid_to: r.length === undefined ? OPEN_END : r.asserted + r.validDelta + r.length,
            known_at: r.known,
            space: r.space,
            payload: r.source === undefined ? '{}' : JSON.stringify({ source: r.source }),
            fact_value: String(r.value),
          }),
        );
        const d = h.policy === undefined ? null : decl(h.policy, h.order);
        const got = decide(d, rows, { asOf: h.asOf, validAt: h.validAt });
        const want = reference(d, rows, h.asOf, h.validAt);
        expect({ reason: got.reason, id: got.chosen?.id ?? null, value: got.chosen?.fact_value ?? null }).toEqual(want);
        expect(got.candidates.every((c) => c.known_at <= h.asOf)).toBe(true);
        expect(got.candidates.length + got.masked).toBe(rows.length);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never answers when the top two tie under latest_valid or latest_observed', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Policy>('latest_valid', 'latest_observed'),
        fc.integer({ min: 0, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 49 }), { maxLength: 6 }),
        (policy, top, others) => {
          const field = policy === 'latest_valid' ? 'valid_from' : 'asserted_at';
          const rows = [top, top, ...others.map((o) => Math.min(o, top - 1))].map((t, i) =>
            row({
              id: `r${i}`,
              asserted_at: policy === 'latest_valid' ? 0 : t,
              valid_from: policy === 'latest_valid' ? t : 60,
              [field]: t,
            }),
          );
          const d = decide(decl(policy), rows, { asOf: 1_000 });
          expect(d.chosen).toBeNull();
          expect(d.reason).toBe('unresolved_conflict');
          expect(d.candidates).toHaveLength(rows.length);
        },
      ),
    );
  });
});
