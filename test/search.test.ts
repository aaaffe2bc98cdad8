// POST /v1/search end to end on real Kuzu and LanceDB folders: filters applied before ranking, time
// consistency, tenant isolation, any query text, validation, and an index rebuilt from the ledger after
// its folder is deleted (a real server process, restarted).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer } from '../evals/lib/spawn-server.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const KEYS = 'ka=alpha,kb=beta';
let t: TestApp;
let before: string;
let now: string;

const search = (body: Record<string, unknown>, key = 'ka') => t.call('POST', '/v1/search', { key, body: { as_of: now, ...body } });
const ids = (r: { json: { results: { node: { id: string } }[] } }) => r.json.results.map((x) => x.node.id);
const serverNow = async (): Promise<string> =>
  (await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: '2100-01-01', limit: 1 } })).json.certificate.tx_as_of;

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: KEYS });
  before = await serverNow();
  // 60 strong matches in category "farm" and one weak match in "rare": without the filter applied
  // before ranking, the weak one never reaches a top-k.
  const farm = Array.from({ length: 60 }, (_, i) => ({
    id: `farm-${i}`,
    kind: 'claim',
    category: 'farm',
    statement: `Apple orchard harvest report ${i}: apple harvest in the orchard was large`,
  }));
  const r = await t.call('POST', '/v1/memories', {
    key: 'ka',
    body: {
      space: 'news',
      nodes: [
        ...farm,
        {
          id: 'weak',
          kind: 'note',
          category: 'rare',
          statement: 'A long note about river levels, ferry timetables and, in passing, the harvest',
        },
        { id: 'cause', kind: 'claim', category: 'weather', statement: 'Heavy rainfall flooded the northern rail line' },
        { id: 'effect', kind: 'claim', category: 'transport', statement: 'Commuters faced long delays' },
      ],
      edges: [{ source_id: 'cause', target_id: 'effect', edge_type: 'CAUSES' }],
    },
  });
  expect(r.status).toBe(200);
  const other = await t.call('POST', '/v1/memories', {
    key: 'ka',
    body: { space: 'other', nodes: [{ id: 'mine', kind: 'claim', statement: 'Rainfall record in another space' }] },
  });
  expect(other.status).toBe(200);
  now = await serverNow();
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('search', () => {
  it('finds the matching block first and adds its effect by expansion', async () => {
    const r = await search({ query: 'rainfall flooded rail', limit: 1 });
    expect(r.status).toBe(200);
    expect(r.json.results[0]).toMatchObject({ node: { id: 'cause' }, match: 'direct', depth: 0, via: null, path: ['cause'] });
    expect(r.json.results).toContainEqual(
      expect.objectContaining({
        node: expect.objectContaining({ id: 'effect' }),
        match: 'expansion',
        via: 'CAUSES',
        depth: 1,
        path: ['cause', 'effect'],
      }),
    );
    const flat = await search({ query: 'rainfall flooded rail', limit: 1, depth: 0 });
    expect(ids(flat)).toEqual(['cause']);
  });

  it('applies category and kind before ranking: a weak match crowded out of the top-k is found when filtered', async () => {
    const all = await search({ query: 'harvest', limit: 10 });
    expect(ids(all)).not.toContain('weak');
    expect(all.json.results.every((x: { node: { category: string } }) => x.node.category === 'farm')).toBe(true);
    const rare = await search({ query: 'harvest', category: 'rare', limit: 10 });
    expect(ids(rare)).toEqual(['weak']);
    const note = await search({ query: 'harvest', kind: 'note' });
    expect(ids(note)).toEqual(['weak']);
  });

  it('confines to a space', async () => {
    const r = await search({ query: 'rainfall', space: 'other' });
    expect(ids(r)).toEqual(['mine']);
  });

  it('is time-consistent: nothing learned after as_of, and the certificate counts what was hidden', async () => {
    const r = await search({ query: 'rainfall flooded rail', as_of: before });
    expect(r.status).toBe(200);
    expect(r.json.results).toEqual([]);
    expect(r.json.certificate.masked.node).toBeGreaterThanOrEqual(1);
    expect(r.json.certificate.as_of).toBe(before);
  });

  it('finds a block written just before (the index has caught up with every acknowledged write)', async () => {
    const w = await t.call('POST', '/v1/memories', {
      key: 'ka',
      body: { space: 'news', nodes: [{ id: 'fresh', kind: 'claim', statement: 'Zebra crossing repainted overnight' }] },
    });
    expect(w.status).toBe(200);
    const r = await t.call('POST', '/v1/search', { key: 'ka', body: { as_of: await serverNow(), query: 'zebra crossing' } });
    expect(ids(r)[0]).toBe('fresh');
  });

  it('shows one version per block: the one the read can see at valid_at', async () => {
    await t.call('POST', '/v1/memories', {
      key: 'ka',
      body: {
        space: 'v',
        nodes: [
          {
            id: 'price',
            kind: 'claim',
            statement: 'Copper price is 8000',
            asserted_at: '2024-01-01T00:00:00Z',
            valid_from: '2024-01-01T00:00:00Z',
            valid_to: '2024-06-01T00:00:00Z',
          },
          {
            id: 'price',
            kind: 'claim',
            statement: 'Copper price is 9000',
            asserted_at: '2024-06-01T00:00:00Z',
            valid_from: '2024-06-01T00:00:00Z',
          },
        ],
      },
    });
    const at = await serverNow();
    const latest = await t.call('POST', '/v1/search', { key: 'ka', body: { as_of: at, query: 'copper price', space: 'v' } });
    expect(latest.json.results.map((x: { node: { statement: string } }) => x.node.statement)).toEqual(['Copper price is 9000']);
    const early = await t.call('POST', '/v1/search', {
      key: 'ka',
      body: { as_of: at, query: 'copper price', space: 'v', valid_at: '2024-03-01T00:00:00Z' },
    });
    expect(early.json.results.map((x: { node: { statement: string } }) => x.node.statement)).toEqual(['Copper price is 8000']);
  });

  it('keeps tenants apart', async () => {
    const r = await search({ query: 'rainfall flooded rail' }, 'kb');
    expect(r.status).toBe(200);
    expect(r.json.results).toEqual([]);
  });

  it('never errors on any language or punctuation', async () => {
    const queries = [
      '東京の天気',
      'حرارة الصيف',
      '¿Qué pasó?',
      '"unbalanced',
      'a AND OR NOT (',
      "o'brien's \\ ' --",
      '*:~^()[]{}<>',
      '🌧️ 🚆',
      '   x   ',
      'rain'.repeat(2000),
      "category = 'x' OR 1=1",
    ];
    for (const query of queries) {
      const r = await search({ query });
      expect(r.status, query).toBe(200);
      expect(Array.isArray(r.json.results)).toBe(true);
    }
    const quoted = await search({ query: 'harvest', category: "it's; drop" });
    expect(quoted.status).toBe(200);
    expect(quoted.json.results).toEqual([]);
  });

  it('refuses empty queries and bad fields with 422 naming the field; without as_of 400', async () => {
    for (const [body, field] of [
      [{ query: '' }, 'query'],
      [{ query: '  \n\t ' }, 'query'],
      [{ query: 'x', limit: 0 }, 'limit'],
      [{ query: 'x', limit: 101 }, 'limit'],
      [{ query: 'x', depth: 6 }, 'depth'],
      [{ query: 'x', family: ['causal', 'nope'] }, 'family'],
      [{}, 'query'],
    ] as const) {
      const r = await search(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail[0].loc).toContain(field);
    }
    const noAsOf = await t.call('POST', '/v1/search', { key: 'ka', body: { query: 'x' } });
    expect(noAsOf.status).toBe(400);
    expect(noAsOf.json.detail.error).toBe('SVC_AS_OF_REQUIRED');
  });

  it('reports the vector index and embedder in check_install', async () => {
    const r = await t.call('GET', '/v1/check_install', { key: 'ka' });
    const names = r.json.checks.map((c: { name: string }) => c.name);
    expect(names).toEqual(expect.arrayContaining(['vector_index', 'embedder']));
    expect(r.json.checks.find((c: { name: string }) => c.name === 'embedder')).toMatchObject({ ok: true, detail: 'local, 384 dimensions' });
  });
});

describe('the index is derived from the ledger', () => {
  it('deleting its folder and restarting finds the same results', async () => {
    const env = { SVC_API_KEYS: 'k=t' };
    const headers = { 'content-type': 'application/json', authorization: 'Bearer k' };
    const post = async (base: string, path: string, body: unknown): Promise<{ results: unknown[] }> =>
      (await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<{ results: unknown[] }>;
    let server = await spawnServer({ env });
    const dataDir = server.dataDir;
    try {
      await post(server.base, '/v1/memories', {
        space: 's',
        nodes: Array.from({ length: 30 }, (_, i) => ({
          id: `n${i}`,
          kind: 'claim',
          statement: `Rail strike day ${i} delays freight ${i % 3 ? 'and ports' : 'and grain'}`,
        })),
        edges: Array.from({ length: 10 }, (_, i) => ({ source_id: `n${i}`, target_id: `n${i + 10}`, edge_type: 'CAUSES' })),
      });
      const q = { query: 'rail strike grain freight', as_of: '2100-01-01', limit: 8 };
      const first = await post(server.base, '/v1/search', q);
      expect(first.results.length).toBeGreaterThanOrEqual(8);
      await server.stop();
      rmSync(join(dataDir, 'search'), { recursive: true, force: true });
      server = await spawnServer({ env, dataDir });
      const again = await post(server.base, '/v1/search', q);
      expect(again.results).toEqual(first.results);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
