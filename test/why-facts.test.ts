// End to end through the REST door on real Kuzu: evidence chains, declarations over time, resolve with
// every reason, rules_as_of around a re-declaration, and the verdicts each answer records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInstant } from '../storage/time.ts';
import type { Context } from '../tools/context.ts';
import { declareFact } from '../tools/declare-fact.ts';
import { runOperation } from '../tools/operation.ts';
import { resolveFact } from '../tools/resolve-fact.ts';
import { why } from '../tools/why.ts';
import { inMemoryClient } from './helpers/mcp-client.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
const now = (): string => formatInstant(t.ledger.now());
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 2));
const verdicts = () => t.ledger.view('local').verdicts();

beforeAll(async () => {
  t = await startTestApp();
  // Resident, as a read without a space makes it: the tests read the tenant's view.
  await t.ledger.load('local');
});
afterAll(async () => {
  await t.close();
});

describe('GET /v1/memories/:id/why', () => {
  let before = '';
  beforeAll(async () => {
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'w',
        nodes: [
          { id: 'strike', kind: 'factor', statement: 'Port strike', asserted_at: '2024-03-01T00:00:00Z' },
          { id: 'delays', kind: 'claim', statement: 'Shipping delays', asserted_at: '2024-03-02T00:00:00Z' },
          {
            id: 'denial',
            kind: 'claim',
            statement: 'No delays at all',
            asserted_at: '2024-03-05T00:00:00Z',
            valid_to: '2024-03-06T00:00:00Z',
          },
          { id: 'mention', kind: 'entity', statement: 'Rotterdam' },
        ],
        edges: [
          { source_id: 'strike', target_id: 'delays', edge_type: 'CAUSES', asserted_at: '2024-03-02T00:00:00Z' },
          { source_id: 'denial', target_id: 'delays', edge_type: 'CONTRADICTS', asserted_at: '2024-03-05T00:00:00Z' },
          { source_id: 'delays', target_id: 'mention', edge_type: 'MENTIONS' },
        ],
      },
    });
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'w',
        backfill: { declared_captured_at: '2024-03-10T00:00:00Z', reason: 'import' },
        nodes: [{ id: 'fix', kind: 'claim', statement: 'Delays revised', asserted_at: '2024-03-09T00:00:00Z' }],
        edges: [{ source_id: 'fix', target_id: 'delays', edge_type: 'SUPERSEDES', asserted_at: '2024-03-09T00:00:00Z' }],
      },
    });
    await tick();
    before = now();
    await tick();
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'w',
        nodes: [{ id: 'analyst', kind: 'claim', statement: 'Analysts confirm', asserted_at: '2024-03-11T00:00:00Z' }],
        edges: [{ source_id: 'analyst', target_id: 'delays', edge_type: 'SUPPORTS', asserted_at: '2024-03-11T00:00:00Z' }],
      },
    });
  });

  it('walks causal, argumentative and temporal edges with roles; never general ones', async () => {
    const r = await t.call('GET', '/v1/memories/delays/why', { query: { as_of: now() } });
    expect(r.status).toBe(200);
    const roles = Object.fromEntries(r.json.chain.map((l: { node: { id: string }; role: string }) => [l.node.id, l.role]));
    expect(roles).toEqual({ delays: 'subject', strike: 'cause', denial: 'contradiction', fix: 'successor', analyst: 'support' });
    expect(r.json.chain.map((l: { node: { id: string } }) => l.node.id)).toEqual(['strike', 'delays', 'denial', 'fix', 'analyst']);
    expect(r.json.certificate.backfill).toEqual({ batches: 1, rows: 2 });
    expect(r.json.reason).toBeUndefined();
  });

  it('as_of hides what was learned later and says so', async () => {
    const r = await t.call('GET', '/v1/memories/delays/why', { query: { as_of: before } });
    expect(r.json.chain.map((l: { node: { id: string } }) => l.node.id)).toEqual(['strike', 'delays', 'denial', 'fix']);
    expect(r.json.certificate.masked).toEqual({ node: 1, edge: 1 });
    // The backfilled rows are visible from their declared instant; what they lead to was learned later.
    const declared = await t.call('GET', '/v1/memories/fix/why', { query: { as_of: '2024-03-10T00:00:00Z' } });
    expect(declared.json.chain.map((l: { node: { id: string } }) => l.node.id)).toEqual(['fix']);
    expect(declared.json.certificate.masked).toEqual({ node: 4, edge: 3 });
    expect(declared.json.certificate.backfill).toEqual({ batches: 1, rows: 1 });
    const early = await t.call('GET', '/v1/memories/fix/why', { query: { as_of: '2024-03-09T23:59:59.999999Z' } });
    expect(early.json).toMatchObject({ chain: [], reason: 'not_yet', certificate: { masked: { node: 5 } } });
  });

  it('valid_at keeps only what was in force then', async () => {
    const r = await t.call('GET', '/v1/memories/delays/why', { query: { as_of: now(), valid_at: '2024-03-07T00:00:00Z' } });
    expect(r.json.chain.map((l: { node: { id: string } }) => l.node.id)).toEqual(['strike', 'delays']);
    const during = await t.call('GET', '/v1/memories/delays/why', { query: { as_of: now(), valid_at: '2024-03-05T12:00:00Z' } });
    expect(during.json.chain.map((l: { node: { id: string } }) => l.node.id)).toEqual(['strike', 'delays', 'denial']);
  });

  it('space confines the walk; an id of another space is absent there', async () => {
    const r = await t.call('GET', '/v1/memories/delays/why', { query: { as_of: now(), space: 'elsewhere' } });
    expect(r.json).toMatchObject({ chain: [], reason: 'absent' });
  });

  it('depth over 10 or not a number is 422 naming depth', async () => {
    for (const depth of ['11', 'deep', '-1', '2.5']) {
      const r = await t.call('GET', '/v1/memories/delays/why', { query: { as_of: now(), depth } });
      expect(r.status).toBe(422);
      expect(r.json.detail[0].loc).toEqual(['query', 'depth']);
    }
    expect((await t.call('GET', '/v1/memories/delays/why', { query: { as_of: now(), depth: 10 } })).status).toBe(200);
  });

  it('walks a long cycle up to depth 10 and stops; ids holding a slash travel as %2F', async () => {
    const ids = Array.from({ length: 14 }, (_, i) => `ring/${i}`);
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'ring',
        nodes: ids.map((id, i) => ({ id, kind: 'claim', asserted_at: `2024-04-${String(i + 1).padStart(2, '0')}T00:00:00Z` })),
        edges: ids.map((id, i) => ({ source_id: id, target_id: ids[(i + 1) % ids.length], edge_type: 'TRIGGERS' })),
      },
    });
    const r = await t.call('GET', `/v1/memories/${encodeURIComponent('ring/0')}/why`, { query: { as_of: now(), depth: 10 } });
    expect(r.status).toBe(200);
    // 14 nodes in a ring: from ring/0 each side reaches 7 hops, so depth 10 reaches all, each once.
    expect(r.json.chain).toHaveLength(14);
    const byId = Object.fromEntries(r.json.chain.map((l: { node: { id: string } }) => [l.node.id, l]));
    expect(byId['ring/7'].depth).toBe(7);
    expect(byId['ring/1']).toMatchObject({ depth: 1, role: 'triggered', path: ['ring/0', 'ring/1'] });
    expect(byId['ring/13']).toMatchObject({ depth: 1, role: 'trigger' });
    const short = await t.call('GET', `/v1/memories/${encodeURIComponent('ring/0')}/why`, { query: { as_of: now(), depth: 2 } });
    expect(short.json.chain.map((l: { node: { id: string } }) => l.node.id).sort()).toEqual([
      'ring/0',
      'ring/1',
      'ring/12',
      'ring/13',
      'ring/2',
    ]);
  });

  it('a bad valid_at is 400 SVC_BAD_TIMESTAMP; no as_of is 400 SVC_AS_OF_REQUIRED', async () => {
    expect((await t.call('GET', '/v1/memories/delays/why', { query: { as_of: now(), valid_at: '2024-03-07' } })).json.detail.error).toBe(
      'SVC_BAD_TIMESTAMP',
    );
    expect((await t.call('GET', '/v1/memories/delays/why', { query: { depth: 99 } })).json.detail.error).toBe('SVC_AS_OF_REQUIRED');
  });
});

describe('POST /v1/facts', () => {
  it('declares with defaults and answers the contract shape', async () => {
    const r = await t.call('POST', '/v1/facts', { body: { fact_key: 'shape' } });
    expect(r.status).toBe(200);
    expect(r.json.declared).toMatchObject({ fact_key: 'shape', key_fields: [], policy: 'latest_valid', source_order: null });
    expect(r.json.declared.declared_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('re-declaring the same rules writes nothing and returns the declaration in force', async () => {
    const a = await t.call('POST', '/v1/facts', { body: { fact_key: 'same', key_fields: ['company'], policy: 'strict' } });
    const count = t.ledger.view('local').declarations.length;
    const b = await t.call('POST', '/v1/facts', { body: { fact_key: 'same', key_fields: ['company'], policy: 'strict' } });
    expect(b.json.declared.declared_at).toBe(a.json.declared.declared_at);
    expect(t.ledger.view('local').declarations.length).toBe(count);
  });

  it('refuses an unknown policy, source_priority without source_order, and a missing key, naming the field', async () => {
    const cases: [unknown, (string | number)[]][] = [
      [{ fact_key: 'x', policy: 'coin_flip' }, ['body', 'policy']],
      [{ fact_key: 'x', policy: 'source_priority' }, ['body', 'source_order']],
      [{ fact_key: 'x', policy: 'source_priority', source_order: [] }, ['body', 'source_order']],
      [{ policy: 'strict' }, ['body', 'fact_key']],
      [{ fact_key: 'x', key_fields: 'a' }, ['body', 'key_fields']],
    ];
    for (const [body, loc] of cases) {
      const r = await t.call('POST', '/v1/facts', { body });
      expect(r.status).toBe(422);
      expect(r.json.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
    }
  });
});

describe('POST /v1/resolve', () => {
  let t0 = '',
    t1 = '',
    t2 = '';
  const resolve = (body: Record<string, unknown>) => t.call('POST', '/v1/resolve', { body: { as_of: now(), ...body } });

  beforeAll(async () => {
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'svc:f',
        nodes: [
          { id: 'r1', kind: 'factor', fact_key: 'rate', fact_value: 5.25, asserted_at: '2023-07-26T18:00:00Z' },
          { id: 'r2', kind: 'factor', fact_key: 'rate', fact_value: 4.75, asserted_at: '2024-11-07T19:00:00Z' },
          {
            id: 'ceo',
            kind: 'claim',
            fact_key: 'ceo',
            fact_value: 'Ada',
            asserted_at: '2024-01-01T00:00:00Z',
            valid_to: '2024-06-01T00:00:00Z',
          },
          {
            id: 'ceo',
            kind: 'claim',
            fact_key: 'ceo',
            fact_value: 'Bob',
            asserted_at: '2024-05-01T00:00:00Z',
            valid_from: '2024-06-01T00:00:00Z',
          },
          {
            id: 'p-crm',
            kind: 'claim',
            fact_key: 'plan',
            fact_value: 'pro',
            payload: { source: 'crm' },
            asserted_at: '2024-01-09T00:00:00Z',
          },
        ],
      },
    });
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'svc:billing',
        nodes: [{ id: 'p-bill', kind: 'claim', fact_key: 'plan', fact_value: 'team', asserted_at: '2024-01-05T00:00:00Z' }],
      },
    });
    await tick();
    t0 = now();
    await tick();
    await t.call('POST', '/v1/facts', { body: { fact_key: 'rate' } });
    await t.call('POST', '/v1/facts', { body: { fact_key: 'ceo', policy: 'strict' } });
    await t.call('POST', '/v1/facts', { body: { fact_key: 'plan', policy: 'source_priority', source_order: ['svc:billing', 'crm'] } });
    await tick();
    t1 = now();
    await tick();
    // Re-declared: the rate is now chosen by observation time, from this instant on.
    await t.call('POST', '/v1/facts', { body: { fact_key: 'rate', policy: 'strict' } });
    await tick();
    t2 = now();
  });

  it('answers with the value, the policy, every candidate and a certificate scoped to the fact', async () => {
    const r = await resolve({ fact: 'rate', as_of: t1 });
    expect(r.json).toMatchObject({ status: 'answered', value: 4.75, policy: 'latest_valid' });
    expect(r.json.candidates).toEqual([
      expect.objectContaining({
        id: 'r1',
        value: 5.25,
        space: 'svc:f',
        asserted_at: '2023-07-26T18:00:00.000000Z',
        source: 'svc:f',
        valid: { from: '2023-07-26T18:00:00.000000Z', to: null },
      }),
      expect.objectContaining({ id: 'r2', value: 4.75 }),
    ]);
    expect(Object.keys(r.json.candidates[0]).sort()).toEqual([
      'asserted_at',
      'id',
      'known_at',
      'source',
      'space',
      'superseded_by',
      'valid',
      'value',
    ]);
    expect(r.json.certificate).toMatchObject({ as_of: t1, fact: 'rate' });
    expect(r.json.certificate.rules_as_of).toBeUndefined();
  });

  it('a declaration applies from its own instant: earlier as_of keeps the earlier one', async () => {
    expect((await resolve({ fact: 'rate', as_of: t0 })).json).toMatchObject({
      status: 'no_answer',
      reason: 'undeclared_fact',
      policy: null,
    });
    expect((await resolve({ fact: 'rate', as_of: t1 })).json.policy).toBe('latest_valid');
    expect((await resolve({ fact: 'rate', as_of: t2 })).json).toMatchObject({ policy: 'strict', reason: 'unresolved_conflict' });
  });

  it('rules_as_of before and after the re-declaration, certified', async () => {
    const early = await resolve({ fact: 'rate', as_of: t2, rules_as_of: t1 });
    expect(early.json).toMatchObject({ status: 'answered', value: 4.75, policy: 'latest_valid' });
    expect(early.json.certificate.rules_as_of).toBe(t1);
    const late = await resolve({ fact: 'rate', as_of: t1, rules_as_of: t2 });
    expect(late.json).toMatchObject({ policy: 'strict', reason: 'unresolved_conflict' });
    expect(late.json.certificate.rules_as_of).toBe(t2);
    const before = await resolve({ fact: 'rate', as_of: t2, rules_as_of: t0 });
    expect(before.json.reason).toBe('undeclared_fact');
  });

  it('valid_at picks the version of one id in force then, boundaries included', async () => {
    const at = async (valid_at: string) => (await resolve({ fact: 'ceo', valid_at })).json;
    expect(await at('2024-05-31T23:59:59.999999Z')).toMatchObject({ status: 'answered', value: 'Ada' });
    expect(await at('2024-06-01T00:00:00Z')).toMatchObject({ status: 'answered', value: 'Bob' });
    expect(await at('2023-12-31T23:59:59.999999Z')).toMatchObject({ status: 'no_answer', reason: 'no_value_at' });
    // Without valid_at both versions compete, and strict refuses two.
    const all = await resolve({ fact: 'ceo' });
    expect(all.json).toMatchObject({ status: 'no_answer', reason: 'unresolved_conflict' });
    expect(all.json.candidates.map((c: { value: string }) => c.value)).toEqual(['Ada', 'Bob']);
  });

  it('source_priority uses payload.source, else the space; space narrows the candidates', async () => {
    const r = await resolve({ fact: 'plan' });
    expect(r.json).toMatchObject({ status: 'answered', value: 'team' });
    expect(r.json.candidates.map((c: { source: string }) => c.source).sort()).toEqual(['crm', 'svc:billing']);
    const narrowed = await resolve({ fact: 'plan', space: 'svc:f' });
    expect(narrowed.json).toMatchObject({ status: 'answered', value: 'pro' });
    expect(narrowed.json.candidates).toHaveLength(1);
    expect((await resolve({ fact: 'plan', space: 'svc:none' })).json.reason).toBe('no_data');
  });

  it('not_yet before the values were learned; no_data for a declared fact nobody carries', async () => {
    await t.call('POST', '/v1/facts', { body: { fact_key: 'empty' } });
    expect((await resolve({ fact: 'empty' })).json.reason).toBe('no_data');
    const r = await resolve({ fact: 'rate', as_of: '2024-12-31', rules_as_of: t1 });
    expect(r.json).toMatchObject({ status: 'no_answer', reason: 'not_yet', candidates: [] });
    expect(r.json.certificate.masked).toEqual({ node: 2 });
  });

  it('validates its input', async () => {
    expect((await t.call('POST', '/v1/resolve', { body: { as_of: now() } })).json.detail[0].loc).toEqual(['body', 'fact']);
    expect((await t.call('POST', '/v1/resolve', { body: { fact: 'rate', as_of: now(), valid_at: 'soon' } })).status).toBe(422);
    expect((await t.call('POST', '/v1/resolve', { body: { fact: 'rate' } })).json.detail.error).toBe('SVC_AS_OF_REQUIRED');
  });
});

describe('verdicts', () => {
  const resolve = (body: Record<string, unknown>) => t.call('POST', '/v1/resolve', { body: { as_of: now(), ...body } });
  beforeAll(async () => {
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'v',
        nodes: [
          { id: 'v1', kind: 'claim', fact_key: 'city', fact_value: { name: 'Oslo' }, asserted_at: '2024-01-01T00:00:00Z' },
          { id: 'v2', kind: 'claim', fact_key: 'city', fact_value: { name: 'Bergen' }, asserted_at: '2024-02-01T00:00:00Z' },
        ],
      },
    });
    await t.call('POST', '/v1/facts', { body: { fact_key: 'city' } });
  });

  it('records each answer once: same fact, candidates and ruleset give one verdict', async () => {
    const n = verdicts().length;
    await resolve({ fact: 'city' });
    await resolve({ fact: 'city' });
    await Promise.all([1, 2, 3, 4].map(() => resolve({ fact: 'city' })));
    const mine = verdicts().filter((v) => v.fact_key === 'city');
    expect(verdicts().length).toBe(n + 1);
    expect(mine).toHaveLength(1);
    const v = mine[0];
    expect(v).toMatchObject({
      target_id: 'v2',
      value: '{"name":"Bergen"}',
      outcome: 'answered',
      method: 'latest_valid',
      resolver: 'svc/' + t.started.services.version,
    });
    expect(v?.known_at).toBe(v?.decided_at);
    expect(JSON.parse(v?.ruleset ?? '{}')).toMatchObject({
      fact_key: 'city',
      declaration: { policy: 'latest_valid' },
      valid_at: null,
      space: null,
    });
  });

  it('a different ruleset or outcome is a new verdict; refusals are recorded too', async () => {
    const n = verdicts().length;
    await resolve({ fact: 'city', valid_at: '2024-01-15T00:00:00Z' });
    await resolve({ fact: 'city', valid_at: '2020-01-01T00:00:00Z' });
    await resolve({ fact: 'city', space: 'v' });
    await resolve({ fact: 'undeclared-here' });
    const added = verdicts().slice(n);
    expect(added.map((v) => [v.outcome, v.target_id])).toEqual([
      ['answered', 'v1'],
      ['no_value_at', null],
      ['answered', 'v2'],
      ['undeclared_fact', null],
    ]);
    expect(added[3]?.method).toBe('none');
    expect(added[2]?.space).toBe('v');
  });

  it('list responses count verdicts decided after as_of as masked', async () => {
    const before = now();
    await tick();
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'v',
        nodes: [{ id: 'v3', kind: 'claim', fact_key: 'city', fact_value: 'Tromsø', asserted_at: '2024-03-01T00:00:00Z' }],
      },
    });
    await resolve({ fact: 'city' });
    const later = verdicts().filter((v) => v.decided_at > t.ledger.now() - 60_000_000 && formatInstant(v.decided_at) > before).length;
    expect(later).toBeGreaterThan(0);
    const r = await t.call('GET', '/v1/memories', { query: { as_of: before, space: 'v' } });
    expect(r.json.masked.verdict).toBe(later);
    const after = await t.call('GET', '/v1/memories', { query: { as_of: now(), space: 'v' } });
    expect(after.json.masked).toBeNull();
  });

  it('a space-narrowed list counts only verdicts on that space, as the export scopes them', async () => {
    const before = now();
    await tick();
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'elsewhere',
        nodes: [{ id: 'e-only', kind: 'claim', fact_key: 'elsewhere_fact', fact_value: 1, asserted_at: '2024-03-01T00:00:00Z' }],
      },
    });
    await t.call('POST', '/v1/facts', { body: { fact_key: 'elsewhere_fact' } });
    await resolve({ fact: 'elsewhere_fact' });
    const chosen = verdicts().filter((v) => v.fact_key === 'elsewhere_fact' && v.target_id === 'e-only');
    expect(chosen.length).toBe(1);
    const inV = await t.call('GET', '/v1/memories', { query: { as_of: before, space: 'v' } });
    const inElsewhere = await t.call('GET', '/v1/memories', { query: { as_of: before, space: 'elsewhere' } });
    const whole = await t.call('GET', '/v1/memories', { query: { as_of: before } });
    expect(inElsewhere.json.masked.verdict).toBe(1);
    expect(inV.json.masked?.verdict ?? 0).toBe(0);
    expect(whole.json.masked.verdict).toBeGreaterThanOrEqual(1);
  });
});

describe('confinement to one space (the app-scoped MCP address)', () => {
  const confined = (space: string): Context => ({ ledger: t.ledger, tenant: 'local', confinedSpace: space, services: t.started.services });
  beforeAll(async () => {
    await t.call('POST', '/v1/memories', {
      body: {
        space: 'c1',
        nodes: [
          { id: 'c1-a', kind: 'claim', fact_key: 'conf', fact_value: 1, asserted_at: '2024-01-01T00:00:00Z' },
          { id: 'c1-b', kind: 'claim', asserted_at: '2024-01-02T00:00:00Z' },
        ],
        edges: [{ source_id: 'c1-a', target_id: 'c1-b', edge_type: 'CAUSES' }],
      },
    });
    await t.call('POST', '/v1/memories', {
      body: { space: 'c2', nodes: [{ id: 'c2-a', kind: 'claim', fact_key: 'conf', fact_value: 2, asserted_at: '2024-02-01T00:00:00Z' }] },
    });
    await t.call('POST', '/v1/facts', { body: { fact_key: 'conf', policy: 'strict' } });
  });

  it('resolve and why see only the confined space, whatever space the input names', async () => {
    const r = (await runOperation(resolveFact, { fact: 'conf', as_of: now(), space: 'c2' }, confined('c1'))) as {
      value: unknown;
      candidates: unknown[];
    };
    expect(r).toMatchObject({ value: 1, candidates: [expect.objectContaining({ id: 'c1-a' })] });
    const w = (await runOperation(why, { id: 'c1-a', as_of: now() }, confined('c2'))) as { chain: unknown[]; reason: string };
    expect(w).toMatchObject({ chain: [], reason: 'absent' });
  });

  it('a confined caller cannot change the tenant-wide rules', async () => {
    const count = t.ledger.view('local').declarations.length;
    await expect(runOperation(declareFact, { fact_key: 'conf', policy: 'latest_valid' }, confined('c1'))).rejects.toMatchObject({
      code: 'SVC_UNAUTHORIZED',
    });
    expect(t.ledger.view('local').declarations.length).toBe(count);
    expect((await t.call('POST', '/v1/resolve', { body: { fact: 'conf', as_of: now() } })).json.reason).toBe('unresolved_conflict');
  });

  it('over MCP: the confined tools answer like the operations, and declare_fact is an isError result', async () => {
    const client = await inMemoryClient(confined('c1'));
    try {
      const listed = (await client.listTools()).tools.map((x) => x.name);
      expect(listed).toEqual(expect.arrayContaining(['why', 'declare_fact', 'resolve_fact']));
      const r = await client.callTool({ name: 'resolve_fact', arguments: { fact: 'conf', as_of: now() } });
      expect(r.structuredContent).toMatchObject({ status: 'answered', value: 1 });
      const w = await client.callTool({ name: 'why', arguments: { id: 'c1-b', as_of: now(), depth: 2 } });
      expect((w.structuredContent as { chain: { role: string }[] }).chain.map((l) => l.role)).toEqual(['cause', 'subject']);
      const d = await client.callTool({ name: 'declare_fact', arguments: { fact_key: 'conf' } });
      expect(d.isError).toBe(true);
      expect(d.structuredContent).toBeUndefined();
      expect(d._meta?.['memory-ledger/error']).toMatchObject({ error: 'SVC_UNAUTHORIZED' });
    } finally {
      await client.close();
    }
  });
});
