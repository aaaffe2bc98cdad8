// resolve_fact without a space, on a tenant whose view is not resident, loads only the views of the spaces
// holding the fact's rows and what those link to (their successors' spaces), with the tenant's declarations
// from its rules view, never the tenant (Ledger.readByFact): its answers must be the tenant view's, byte
// for byte but the instant the server answered, under every policy and reason, at past and present as_of,
// with valid_at and rules_as_of, backfill, supersession and invalidations crossing spaces, rows still in
// the write journal, and candidates in many spaces; the verdicts recorded are the same ones, once each.
// declare_fact after a restart does not load the tenant either, and stays idempotent under concurrency.
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../storage/log/ledger.ts';
import type { WriteInput } from '../storage/log/write-plan.ts';
import { MAX_READ_SPACES } from '../storage/read/read-by-id.ts';
import { formatInstant, type Micros } from '../storage/time.ts';
import type { Context } from '../tools/context.ts';
import { declareFact } from '../tools/declare-fact.ts';
import { runOperation } from '../tools/operation.ts';
import { resolveFact } from '../tools/resolve-fact.ts';
import {
  FILLER_ROWS,
  restartableLedger,
  SMALL_BUDGET_MB as BUDGET_MB,
  spacesLoaded,
  type RestartableLedger,
} from './helpers/temp-ledger.ts';
import { answerEach, expectAsTenantView } from './helpers/same-answers.ts';
import { claimInput, DAY, edgeInput, T0 } from './helpers/write-inputs.ts';

const T = 'acme';

let store: RestartableLedger | null = null;
afterEach(async () => {
  await store?.remove();
  store = null;
});

const ctxOf = (ledger: Ledger): Context => ({ ledger, tenant: T, services: { version: 'test' } });

async function write(l: Ledger, input: WriteInput): Promise<void> {
  const out = await l.write(T, input);
  expect(out.refused).toEqual([]);
}

/** A node carrying `fact` with `value`, valid from T0 + `day` days. */
const fact = (
  id: string,
  key: string,
  value: unknown,
  day: number,
  extra: Partial<WriteInput['nodes'][number]> = {},
): WriteInput['nodes'][number] => claimInput(id, { kind: 'fact', fact_key: key, fact_value: value, valid_from: T0 + day * DAY, ...extra });

async function declare(l: Ledger, input: Record<string, unknown>): Promise<{ declared: { declared_at: string } }> {
  return (await runOperation(declareFact, input, ctxOf(l))) as { declared: { declared_at: string } };
}

/** The answer as the text it would be sent as, without the instant the server answered. */
async function resolve(l: Ledger, input: Record<string, unknown>): Promise<string> {
  const out = (await runOperation(resolveFact, input, ctxOf(l))) as { certificate: Record<string, unknown> };
  return JSON.stringify({ ...out, certificate: { ...out.certificate, tx_as_of: undefined } });
}

/** The tenant's verdicts, read from its rules view (which never loads the tenant). */
const verdicts = (l: Ledger): Promise<{ hash: string; space: string | null }[]> =>
  l.withRules(T, (view) => Promise.resolve(view.verdicts().map((v) => ({ hash: v.hash, space: v.space }))));

describe('resolve_fact without a space, of a tenant not resident', () => {
  it('loads only the spaces holding the fact and its successors, and answers and records as the tenant view does', async () => {
    store = restartableLedger('resolve-by-spaces', { memoryMb: BUDGET_MB, graph: { flushAfterMs: 3_600_000 } });
    let l = await store.open();
    const marks: Micros[] = [];
    await write(l, { space: 'filler', nodes: Array.from({ length: FILLER_ROWS }, (_, i) => claimInput(`filler${i}`)), edges: [] });
    await declare(l, { fact_key: 'city' });
    await declare(l, { fact_key: 'mood', policy: 'latest_observed' });
    await declare(l, { fact_key: 'plan', policy: 'source_priority', source_order: ['crm', 'app'] });
    await declare(l, { fact_key: 'tie', policy: 'strict' });
    await declare(l, { fact_key: 'empty' });
    await declare(l, { fact_key: 'wide' });
    // Unrelated spaces: never loaded by a resolve.
    for (let i = 0; i < 4; i++)
      await write(l, { space: `other:${i}`, nodes: [claimInput(`o${i}`), fact(`on${i}`, 'elsewhere', i, 1)], edges: [] });
    const before = l.now();
    await write(l, {
      space: 'u1',
      nodes: [fact('c1', 'city', 'Paris', 0), fact('m1', 'mood', 'calm', 0, { asserted_at: T0 + 3 * DAY })],
      edges: [],
    });
    await write(l, {
      space: 'u2',
      nodes: [fact('c2', 'city', 'Lyon', 5), fact('m2', 'mood', 'glad', 0, { asserted_at: T0 + 2 * DAY }), fact('t1', 'tie', 1, 0)],
      edges: [],
    });
    marks.push(l.now());
    await write(l, {
      space: 'u3',
      nodes: [
        fact('c3', 'city', 'Nice', 10),
        fact('p1', 'plan', 'gold', 0, { payload: { source: 'app' } }),
        fact('t2', 'tie', 2, 0, { valid_to: T0 + 3 * DAY }),
      ],
      edges: [],
    });
    // Supersession across spaces: s5 (in u5, carrying no fact) replaces c2 (in u2); c3 (in u3, and a
    // version without the fact in u9) is invalidated by a row recorded in u9.
    await write(l, { space: 'u5', nodes: [claimInput('s5')], edges: [edgeInput('s5', 'SUPERSEDES', 'c2')] });
    await write(l, { space: 'u9', nodes: [claimInput('c3', { valid_to: T0 + 10 * DAY })], edges: [] });
    expect(await l.invalidate(T, { id: 'c3', reason: 'moved', space: 'u9' })).toMatchObject({
      kind: 'written',
      invalidation: { space: 'u9' },
    });
    await write(l, {
      space: 'u4',
      nodes: [
        fact('p2', 'plan', 'silver', 1, { payload: { source: 'crm' } }),
        fact('p3', 'plan', 'bronze', 2, { payload: { source: 'web' } }),
      ],
      edges: [],
    });
    for (let i = 0; i < 10; i++) await write(l, { space: `w${i}`, nodes: [fact(`wide${i}`, 'wide', i, i)], edges: [] });
    await write(l, { space: 'u8', nodes: [fact('nd1', 'undeclared', 'x', 0)], edges: [] });
    marks.push(l.now());
    // Backfill: known since before the first mark's rows were written after it.
    await write(l, {
      space: 'u6',
      backfill: { declared_captured_at: marks[0]! - 1, reason: 'imported late' },
      nodes: [fact('c6', 'city', 'Metz', 2)],
      edges: [],
    });
    await declare(l, { fact_key: 'later' });
    await write(l, { space: 'u1', nodes: [fact('l1', 'later', 'soon', 0)], edges: [] });
    // The successor retracted: c2 replaced by nothing from here on.
    expect(await l.invalidate(T, { id: 's5', reason: 'wrong' })).toMatchObject({ kind: 'written' });
    // The rules change: city chosen by observation from here on.
    await declare(l, { fact_key: 'city', policy: 'latest_observed' });
    marks.push(l.now());

    // Restarted: every row above is in the engine; the rows below stay in the write journal.
    l = await store.open();
    expect(l.tenants()).toEqual([]);
    await write(l, {
      space: 'u7',
      nodes: [fact('c7', 'city', 'Brest', 20, { asserted_at: T0 + 30 * DAY })],
      edges: [edgeInput('c7', 'SUPERSEDES', 'c1')],
    });
    expect(await l.invalidate(T, { id: 'm2', reason: 'retracted' })).toMatchObject({ kind: 'written' });
    await write(l, { space: 'u5', nodes: [fact('t3', 'tie', 3, 4)], edges: [] });
    marks.push(l.now());

    const facts = ['city', 'mood', 'plan', 'tie', 'empty', 'later', 'undeclared', 'wide', 'nowhere'];
    // Instants, not "now" (each read would resolve it anew); the first is before every row carrying a fact.
    const asOfs = [before, ...marks].map((m) => formatInstant(m));
    const reads: Record<string, unknown>[] = [];
    for (const f of facts)
      for (const as_of of asOfs) {
        reads.push({ fact: f, as_of });
        reads.push({ fact: f, as_of, valid_at: formatInstant(T0 + 1 * DAY) });
        reads.push({ fact: f, as_of, valid_at: formatInstant(T0 - DAY) });
        reads.push({ fact: f, as_of, rules_as_of: formatInstant(marks[1]!) });
      }

    // Cold: every view but the filler's evicted before each fact's first read.
    const cold: string[] = [];
    const cityLoaded = new Set<string>();
    for (const read of reads) {
      if (read === reads.find((r) => r.fact === read.fact)) {
        await l.viewOf(T, 'filler');
        expect(spacesLoaded(l)).toEqual(['filler']);
      }
      cold.push(await resolve(l, read));
      const loaded = spacesLoaded(l).filter((s) => s !== 'filler');
      expect(l.tenants()).toEqual([]);
      expect(loaded.filter((s) => s.startsWith('other:'))).toEqual([]);
      // city's rows are in u1, u2, u3, u6 and u7; s5 (u5) replaces c2, c7 (u7) replaces c1. c3 is in u9 too,
      // but is invalidated wherever it is known, so nothing asks what replaces it.
      if (read.fact === 'city') for (const s of loaded) cityLoaded.add(s);
      if (read.fact === 'city')
        expect(loaded.filter((s) => !['u1', 'u2', 'u3', 'u5', 'u6', 'u7'].includes(s) && !s.startsWith('w'))).toEqual([]);
      if (read.fact === 'plan' && read === reads.find((r) => r.fact === 'plan')) expect(loaded).toEqual(['u3', 'u4']);
      if (read.fact === 'nowhere' && read === reads.find((r) => r.fact === 'nowhere')) expect(loaded).toEqual([]);
    }
    expect([...cityLoaded].sort()).toEqual(['u1', 'u2', 'u3', 'u5', 'u6', 'u7']);
    expect(l.byFactStats()).toEqual({ spaces: reads.length, tenant: 0 });
    const recorded = await verdicts(l);
    expect(new Set(recorded.map((v) => v.hash)).size).toBe(recorded.length);
    expect(recorded.every((v) => v.space === null)).toBe(true);

    // Warm: the spaces' views resident from earlier reads.
    const warm = await answerEach(reads, (read) => resolve(l, read));
    expect(await verdicts(l)).toEqual(recorded);

    // The tenant resident: its view answers, and finds every verdict already recorded.
    // Pinned: the verdicts a read records are commits, after which views past the budget are evicted.
    const unpin = l.pin(T);
    await l.load(T);
    const whole = await answerEach(reads, (read) => resolve(l, read));
    expect(l.byFactStats()).toEqual({ spaces: 2 * reads.length, tenant: 0 });
    expect(await verdicts(l)).toEqual(recorded);
    expect(l.tenants()).toEqual([T]);
    unpin();

    expectAsTenantView(reads, whole, cold, warm);
    // What the comparison covers: each reason and policy, supersession seen and undone, an invalidation
    // from another space, backfill, the rules in force at rules_as_of.
    const at = (input: Record<string, unknown>): Record<string, unknown> =>
      JSON.parse(whole[reads.findIndex((r) => JSON.stringify(r) === JSON.stringify(input))]!) as Record<string, unknown>;
    const now = formatInstant(marks[3]!);
    expect(at({ fact: 'city', as_of: formatInstant(marks[1]!) })).toMatchObject({
      status: 'answered',
      value: 'Lyon',
      policy: 'latest_valid',
      certificate: { invalidated: 1 },
    });
    const cityAt1 = at({ fact: 'city', as_of: formatInstant(marks[1]!) }) as { candidates: { id: string; superseded_by: string[] }[] };
    expect(cityAt1.candidates.find((c) => c.id === 'c2')?.superseded_by).toEqual(['s5']);
    const cityNow = at({ fact: 'city', as_of: now }) as {
      candidates: { id: string; superseded_by: string[] }[];
      policy: string;
      value: string;
    };
    expect(cityNow).toMatchObject({ policy: 'latest_observed', value: 'Metz' });
    expect(cityNow.candidates.find((c) => c.id === 'c2')?.superseded_by).toEqual([]);
    expect(cityNow.candidates.find((c) => c.id === 'c1')?.superseded_by).toEqual(['c7']);
    expect(at({ fact: 'city', as_of: now, rules_as_of: formatInstant(marks[1]!) })).toMatchObject({
      policy: 'latest_valid',
      value: 'Brest',
    });
    expect(at({ fact: 'city', as_of: formatInstant(marks[2]!) })).toHaveProperty('certificate.backfill');
    expect(at({ fact: 'city', as_of: asOfs[0]! })).toMatchObject({ status: 'no_answer', reason: 'not_yet' });
    expect(at({ fact: 'city', as_of: now, valid_at: formatInstant(T0 - DAY) })).toMatchObject({ reason: 'no_value_at' });
    expect(at({ fact: 'mood', as_of: formatInstant(marks[1]!) })).toMatchObject({ value: 'calm' });
    expect(at({ fact: 'plan', as_of: now })).toMatchObject({ value: 'silver' });
    expect(at({ fact: 'tie', as_of: now })).toMatchObject({ reason: 'unresolved_conflict' });
    expect(at({ fact: 'tie', as_of: formatInstant(marks[0]!) })).toMatchObject({ value: 1 });
    expect(at({ fact: 'empty', as_of: now })).toMatchObject({ reason: 'no_data' });
    expect(at({ fact: 'undeclared', as_of: now })).toMatchObject({ reason: 'undeclared_fact' });
    expect(at({ fact: 'later', as_of: formatInstant(marks[1]!) })).toMatchObject({ reason: 'undeclared_fact' });
    expect(at({ fact: 'wide', as_of: now })).toMatchObject({ value: 9 });
    expect((at({ fact: 'wide', as_of: now }) as { candidates: unknown[] }).candidates).toHaveLength(10);
  }, 240_000);

  it(`falls back to the tenant's view past ${MAX_READ_SPACES} spaces, with the same answer and verdict`, async () => {
    store = restartableLedger('resolve-by-spaces-wide', { graph: { flushAfterMs: 3_600_000 } });
    let l = await store.open();
    await declare(l, { fact_key: 'hub' });
    await declare(l, { fact_key: 'few' });
    const n = MAX_READ_SPACES + 2;
    for (let i = 0; i < n; i++)
      await write(l, { space: `s${i}`, nodes: [fact(`h${i}`, 'hub', i, i), ...(i < 3 ? [fact(`f${i}`, 'few', i, i)] : [])], edges: [] });
    const as_of = formatInstant(l.now());
    await l.load(T);
    const whole = [await resolve(l, { fact: 'hub', as_of }), await resolve(l, { fact: 'few', as_of })];
    const recorded = await verdicts(l);
    expect(recorded).toHaveLength(2);
    l = await store.open();
    expect(await resolve(l, { fact: 'few', as_of })).toBe(whole[1]);
    expect(spacesLoaded(l)).toEqual(['s0', 's1', 's2']);
    expect(l.byFactStats()).toEqual({ spaces: 1, tenant: 0 });
    expect(l.tenants()).toEqual([]);
    // A row of the fact written in a new space after its spaces were looked up (and remembered) is found.
    await write(l, { space: 'late', nodes: [fact('f9', 'few', 9, 9)], edges: [] });
    const later = JSON.parse(await resolve(l, { fact: 'few', as_of: formatInstant(l.now()) })) as { candidates: { id: string }[] };
    expect(later.candidates.map((c) => c.id)).toEqual(['f0', 'f1', 'f2', 'f9']);
    expect(l.byFactStats()).toEqual({ spaces: 2, tenant: 0 });
    expect(await resolve(l, { fact: 'hub', as_of })).toBe(whole[0]);
    expect(l.byFactStats()).toEqual({ spaces: 2, tenant: 1 });
    expect(l.tenants()).toEqual([T]);
    expect((await verdicts(l)).slice(0, 2)).toEqual(recorded);
  });
});

describe('declare_fact after a restart', () => {
  it('never loads the tenant, and equal declarations made at once are written once', async () => {
    store = restartableLedger('declare-by-rules', { graph: { flushAfterMs: 3_600_000 } });
    let l = await store.open();
    await write(l, { space: 'u1', nodes: [fact('c1', 'city', 'Paris', 0)], edges: [] });
    const first = await declare(l, { fact_key: 'city' });
    l = await store.open();
    // The same rules again: the declaration in force, nothing written.
    expect(await declare(l, { fact_key: 'city' })).toEqual(first);
    expect(l.tenants()).toEqual([]);
    expect(spacesLoaded(l)).toEqual([]);
    // Equal declarations at once: the first call's commit goes alone, those queued while it runs share the
    // next group, where each sees what the ones before it staged (the view learns of them after the commit).
    const [, ...same] = await Promise.all([
      declare(l, { fact_key: 'first' }),
      ...Array.from({ length: 6 }, () => declare(l, { fact_key: 'rate', policy: 'strict' })),
    ]);
    expect(new Set(same.map((d) => JSON.stringify(d))).size).toBe(1);
    // New rules at once, in one group: each compared with the one staged before it (an equal one returned,
    // another written after it, in force from then on).
    const [, ...changed] = await Promise.all([
      declare(l, { fact_key: 'second' }),
      declare(l, { fact_key: 'city', policy: 'latest_observed' }),
      declare(l, { fact_key: 'city', policy: 'latest_observed' }),
      declare(l, { fact_key: 'city', policy: 'source_priority', source_order: ['crm'] }),
    ]);
    expect(changed[0]).toEqual(changed[1]);
    expect(changed[2]).not.toEqual(changed[0]);
    expect(l.tenants()).toEqual([]);
    const rows = await l.withRules(T, (view) => Promise.resolve(view.declarations().map((d) => `${d.fact_key}:${d.policy}`)));
    expect(rows).toEqual([
      'city:latest_valid',
      'first:latest_valid',
      'rate:strict',
      'second:latest_valid',
      'city:latest_observed',
      'city:source_priority',
    ]);
    // The same rows after a restart (read from the store).
    l = await store.open();
    const stored = await l.withRules(T, (view) => Promise.resolve(view.declarations().map((d) => `${d.fact_key}:${d.policy}`)));
    expect(stored).toEqual(rows);
    expect(l.tenants()).toEqual([]);
  });
});
