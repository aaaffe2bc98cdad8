// An exact tenant copy between two servers through the operator routes: exported page by page from A,
// imported into a fresh B, the copies have equal digests and answer alike (but for tx_as_of); a cursor of
// A pages on B; B's next write of the tenant comes after every imported row even with B's clock behind;
// a re-import is skipped, a changed row refused; the routes take the operator key only; a deleted copy
// stays deleted across a restart, search index included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { startTestApp, type TestApp } from './helpers/app.ts';

const OP = 'operator-key-0123456789';
const env = { SVC_API_KEYS: 'ka=acme,kb=beta', SVC_OPERATOR_KEY: OP };
const HOUR = 3_600_000_000;

let a: TestApp;
let b: TestApp;
let now: string;
/** After the rows the second copy brings. */
let later: string;
const stopped: string[] = [];

const write = async (t: TestApp, body: unknown, key = 'ka'): Promise<void> => {
  const r = await t.call('POST', '/v1/memories', { key, body });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
};
const serverNow = async (t: TestApp): Promise<string> =>
  (await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: '2100-01-01', limit: 1 } })).json.certificate.tx_as_of;

/** Every exported row of a tenant, page by page with a small limit; checks each page's shape on the way. */
async function exportAll(t: TestApp, tenant: string, limit: number): Promise<{ rows: any[]; pages: number }> {
  const rows: any[] = [];
  let after = 0;
  let pages = 0;
  for (;;) {
    const r = await t.call('GET', `/admin/tenants/${tenant}/rows`, { key: OP, query: { after, limit } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.tenant).toBe(tenant);
    expect(r.json.rows.length).toBeLessThanOrEqual(limit + 2);
    rows.push(...r.json.rows);
    pages++;
    if (r.json.next_after === null) {
      expect(rows.at(-1)?.tseq ?? 0).toBe(r.json.last_tseq);
      return { rows, pages };
    }
    after = r.json.next_after;
  }
}

async function importAll(t: TestApp, tenant: string, rows: any[], per: number): Promise<{ stored: number; skipped: number }> {
  let stored = 0;
  let skipped = 0;
  for (let i = 0; i < rows.length; i += per) {
    const r = await t.call('POST', `/admin/tenants/${tenant}/rows`, { key: OP, body: { rows: rows.slice(i, i + per) } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    stored += r.json.stored;
    skipped += r.json.skipped;
  }
  return { stored, skipped };
}

/** An answer with the one field a copy may change (the server's present instant) taken out. */
function comparable(json: any): string {
  const copy = structuredClone(json);
  if (copy?.certificate) delete copy.certificate.tx_as_of;
  return JSON.stringify(copy);
}

beforeAll(async () => {
  a = await startTestApp(env);
  b = await startTestApp(env);
  // A's clock runs an hour ahead of B's: the rows it writes are "in the future" for B.
  a.ledger.clock.advance(a.ledger.clock.peek() + HOUR);
  await write(a, {
    space: 'user:1',
    nodes: [
      { id: 'rain', kind: 'claim', statement: 'heavy rain in the valley', category: 'weather' },
      { id: 'rate-old', kind: 'claim', statement: 'rate 4.5', fact_key: 'rate', fact_value: 4.5, asserted_at: '2024-01-01T00:00:00Z' },
      { id: 'rate-new', kind: 'claim', statement: 'rate 4.75', fact_key: 'rate', fact_value: 4.75, asserted_at: '2024-06-01T00:00:00Z' },
      { id: 'v', kind: 'factor', statement: 'v1', asserted_at: '2024-01-01T00:00:00Z', valid_to: '2024-02-01T00:00:00Z' },
      { id: 'v', kind: 'factor', statement: 'v2', asserted_at: '2024-02-01T00:00:00Z' },
    ],
    edges: [
      { source_id: 'rain', target_id: 'rate-old', edge_type: 'CAUSES', lag: '36 hours', confidence: 0.7, mechanism: 'supply' },
      { source_id: 'rate-new', target_id: 'rate-old', edge_type: 'SUPERSEDES' },
    ],
  });
  await write(a, {
    space: 'user:2',
    nodes: [{ id: 'old-note', kind: 'claim', statement: 'flood warning from the archive', asserted_at: '2023-03-01T00:00:00Z' }],
    backfill: { declared_captured_at: '2023-03-02T00:00:00Z', reason: 'archive import' },
  });
  await write(a, {
    space: 'svc:shared',
    nodes: [{ id: 'shared', kind: 'claim', statement: 'river level rising' }],
    edges: [{ source_id: 'shared', target_id: 'rain', edge_type: 'SUPPORTS' }],
  });
  for (let i = 0; i < 12; i++)
    await write(a, { space: 'user:1', nodes: [{ id: `n${i}`, kind: 'claim', statement: `note ${i} about rain` }] });
  expect((await a.call('POST', '/v1/facts', { key: 'ka', body: { fact_key: 'rate' } })).status).toBe(200);
  const resolved = await a.call('POST', '/v1/resolve', { key: 'ka', body: { fact: 'rate', as_of: await serverNow(a) } });
  expect(resolved.json.value).toBe(4.75);
  const inv = await a.call('POST', '/v1/memories/n3/invalidate', { key: 'ka', body: { reason: 'wrong' } });
  expect(inv.status, JSON.stringify(inv.json)).toBe(200);
  // Another tenant on A: never part of acme's copy.
  await write(a, { space: 'beta-space', nodes: [{ id: 'secret', kind: 'claim', statement: 'beta only rain' }] }, 'kb');
  now = await serverNow(a);
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  for (const d of stopped) rmSync(d, { recursive: true, force: true });
});

describe('the operator routes', () => {
  it('take the operator key only: a tenant key is 403, another 401, no key configured 404', async () => {
    expect((await a.call('GET', '/admin/tenants/acme/digest', { key: 'ka' })).status).toBe(403);
    expect((await a.call('GET', '/admin/tenants/acme/digest', { key: 'nope' })).status).toBe(401);
    expect((await a.call('GET', '/admin/tenants/acme/digest')).status).toBe(401);
    expect((await a.call('GET', '/admin/tenants/acme/rows', { key: OP, query: { limit: 0 } })).status).toBe(422);
    const plain = await startTestApp({ SVC_API_KEYS: 'ka=acme' });
    try {
      expect((await plain.call('GET', '/admin/tenants/acme/digest', { key: 'ka' })).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('a tenant copied from A to B', () => {
  let exported: any[];

  it('exports every table in tseq order, a prefix always consistent, and imports it verbatim', async () => {
    const { rows, pages } = await exportAll(a, 'acme', 3);
    exported = rows;
    expect(pages).toBeGreaterThan(5);
    const tables = new Set(rows.map((r) => r.table));
    for (const t of ['batch', 'space', 'node', 'edge', 'declaration', 'verdict', 'invalidation']) expect(tables).toContain(t);
    expect(rows.every((r) => r.tenant === 'acme' && !('seq' in r))).toBe(true);
    // In tseq order; a batch or a space comes before the first row naming it.
    for (let i = 1; i < rows.length; i++) expect(rows[i].tseq).toBeGreaterThanOrEqual(rows[i - 1].tseq);
    const at = (pred: (r: any) => boolean): number => rows.findIndex(pred);
    expect(at((r) => r.table === 'batch')).toBeLessThan(at((r) => r.batch_id !== null && r.batch_id !== undefined));
    expect(at((r) => r.table === 'space' && r.space === 'svc:shared')).toBeLessThan(
      at((r) => r.table !== 'space' && r.space === 'svc:shared'),
    );
    // Pages of 7 rows on import, 3 on export: boundaries fall anywhere.
    expect(await importAll(b, 'acme', rows, 7)).toEqual({ stored: rows.length, skipped: 0 });
    const da = await a.call('GET', '/admin/tenants/acme/digest', { key: OP });
    const db = await b.call('GET', '/admin/tenants/acme/digest', { key: OP });
    expect(da.json.rows).toBe(rows.length);
    expect(db.json).toEqual(da.json);
    expect(da.json.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // A digest up to a tseq covers that prefix only.
    const mid = rows[Math.floor(rows.length / 2)].tseq;
    const part = await b.call('GET', '/admin/tenants/acme/digest', { key: OP, query: { up_to: mid } });
    expect(part.json.rows).toBe(rows.filter((r) => r.tseq <= mid).length);
    expect(part.json.digest).toBe((await a.call('GET', '/admin/tenants/acme/digest', { key: OP, query: { up_to: mid } })).json.digest);
  });

  it('serves a read confined to one space from the index by space imported with the rows', async () => {
    // More rows of acme, copied after the first copy (the rows it holds are skipped). Ids living in two
    // spaces, invalidated: 'moved' before its version in s2 is written (s2 then holds the older
    // invalidation), 'twin' after both (held by both at once). Imported 2 rows a call, so an invalidation
    // and a version it retracts come in different calls, and a write's nodes and edges too.
    const until = (statement: string): object => ({
      kind: 'claim',
      statement,
      asserted_at: '2024-01-01T00:00:00Z',
      valid_to: '2024-02-01T00:00:00Z',
    });
    const since = (statement: string): object => ({ kind: 'claim', statement, asserted_at: '2024-02-01T00:00:00Z' });
    const invalidate = async (id: string): Promise<void> => {
      expect((await a.call('POST', `/v1/memories/${id}/invalidate`, { key: 'ka', body: { reason: 'wrong' } })).status).toBe(200);
    };
    await write(
      a,
      {
        space: 's1',
        nodes: [
          { id: 'moved', ...until('moved in January') },
          { id: 'twin', ...until('twin in January') },
          { id: 'stays', kind: 'claim', statement: 'stays', asserted_at: '2023-06-01T00:00:00Z' },
        ],
      },
      'ka',
    );
    await invalidate('moved');
    await write(
      a,
      {
        space: 's2',
        nodes: [
          { id: 'moved', ...since('moved in February') },
          { id: 'twin', ...since('twin in February') },
          { id: 'other', kind: 'claim', statement: 'other', asserted_at: '2023-06-01T00:00:00Z' },
        ],
      },
      'ka',
    );
    await invalidate('twin');
    const at = await serverNow(a);
    later = at;
    const { rows } = await exportAll(a, 'acme', 2);
    expect(await importAll(b, 'acme', rows, 2)).toEqual({ stored: rows.length - exported.length, skipped: exported.length });
    exported = rows;
    const ids = async (t: TestApp, space: string, validAt: string): Promise<string[]> => {
      const r = await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: at, space, valid_at: validAt, limit: 50 } });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      return r.json.items.map((n: { id: string }) => n.id).sort();
    };
    // Each invalidation retracts its id in both spaces, at a valid time where each version holds.
    expect(await ids(b, 's1', '2024-01-15T00:00:00Z')).toEqual(['stays']);
    expect(await ids(b, 's2', '2024-03-01T00:00:00Z')).toEqual(['other']);
    for (const [space, validAt] of [
      ['s1', '2024-01-15T00:00:00Z'],
      ['s2', '2024-03-01T00:00:00Z'],
    ] as const) {
      expect(await ids(b, space, validAt)).toEqual(await ids(a, space, validAt));
      const got = await b.call('GET', '/v1/memories/twin', { key: 'ka', query: { as_of: at, space, valid_at: validAt } });
      expect(got.json.reason).toBe('invalidated');
    }
    // Answered from the spaces' own read models, loaded through the index imported with the rows.
    expect(b.ledger.residentSpaces()).toEqual(
      expect.arrayContaining([
        ['acme', 's1'],
        ['acme', 's2'],
      ]),
    );
    // acme's spaces too.
    expect(
      (await b.call('GET', '/v1/memories', { key: 'ka', query: { as_of: now, space: 'user:2' } })).json.items.map(
        (n: { id: string }) => n.id,
      ),
    ).toEqual(['old-note']);
  });

  it('answers list, get, why, search and resolve as A does (but for tx_as_of)', async () => {
    // Full-text scores count the index's segments: both indexes settled, as after a quiet moment.
    for (const t of [a, b]) await t.started.services.search?.optimize(['acme']);
    const asks: [string, string, { query?: Record<string, string | number>; body?: unknown }][] = [
      ['GET', '/v1/memories', { query: { as_of: now, limit: 50 } }],
      ['GET', '/v1/memories', { query: { as_of: now, space: 'user:1', valid_at: '2024-01-15T00:00:00Z' } }],
      ['GET', '/v1/memories', { query: { as_of: now, space: 'user:2' } }],
      ['GET', '/v1/memories/v', { query: { as_of: now, valid_at: '2024-01-15T00:00:00Z' } }],
      ['GET', '/v1/memories/rate-new', { query: { as_of: now } }],
      ['GET', '/v1/memories/rain/why', { query: { as_of: now } }],
      ['POST', '/v1/search', { body: { as_of: now, query: 'rain flood river' } }],
      ['POST', '/v1/search', { body: { as_of: now, query: 'rate rain valley' } }],
      ['POST', '/v1/search', { body: { as_of: now, query: 'note', space: 'user:1' } }],
      ['POST', '/v1/search', { body: { as_of: now, query: 'rate rain', space: 'user:1' } }],
      ['POST', '/v1/search', { body: { as_of: later, query: 'rain flood river moved twin' } }],
      ['POST', '/v1/search', { body: { as_of: later, query: 'moved in February', space: 's2', valid_at: '2024-03-01T00:00:00Z' } }],
      ['POST', '/v1/search', { body: { as_of: later, query: 'twin January', space: 's1' } }],
      ['POST', '/v1/resolve', { body: { fact: 'rate', as_of: now } }],
      ['GET', '/v1/spaces', { query: { as_of: now } }],
    ];
    for (const [method, path, opts] of asks) {
      const ra = await a.call(method, path, { key: 'ka', ...opts });
      const rb = await b.call(method, path, { key: 'ka', ...opts });
      expect(ra.status, `${path} ${JSON.stringify(ra.json)}`).toBe(200);
      expect(rb.status).toBe(200);
      expect(comparable(rb.json), `${method} ${path}`).toBe(comparable(ra.json));
    }
    // The search found something (a comparison of two empty answers proves nothing).
    expect(
      (await b.call('POST', '/v1/search', { key: 'ka', body: { as_of: now, query: 'rain flood river' } })).json.results.length,
    ).toBeGreaterThan(0);
  });

  it('pages a cursor issued by A on B', async () => {
    const first = await a.call('GET', '/v1/memories', { key: 'ka', query: { as_of: now, limit: 4 } });
    const cursor = first.json.next_cursor;
    expect(typeof cursor).toBe('string');
    const ra = await a.call('GET', '/v1/memories', { key: 'ka', query: { as_of: now, limit: 4, cursor } });
    const rb = await b.call('GET', '/v1/memories', { key: 'ka', query: { as_of: now, limit: 4, cursor } });
    expect(rb.json.items.length).toBe(4);
    expect(comparable(rb.json)).toBe(comparable(ra.json));
  });

  it('writes the tenant on B after every imported row, though B\u2019s clock was an hour behind', async () => {
    const top = Math.max(...exported.map((r) => r.tseq));
    const latest = Math.max(...exported.filter((r) => r.captured_at !== undefined).map((r) => r.captured_at));
    expect(latest).toBeGreaterThan(Date.now() * 1000 + HOUR / 2);
    await write(b, { space: 'user:1', nodes: [{ id: 'after-move', kind: 'claim', statement: 'written on B' }] });
    const page = await b.call('GET', '/admin/tenants/acme/rows', { key: OP, query: { after: top } });
    const mine = page.json.rows.filter((r: any) => r.table === 'node');
    expect(mine.map((r: any) => r.id)).toEqual(['after-move']);
    expect(mine[0].tseq).toBeGreaterThan(top);
    expect(mine[0].captured_at).toBeGreaterThan(latest);
    expect(page.json.last_tseq).toBe(mine[0].tseq);
    // The new row lists after every copied one.
    const all = await b.call('GET', '/v1/memories', { key: 'ka', query: { as_of: '2100-01-01', limit: 200 } });
    expect(all.json.items.at(-1).id).toBe('after-move');
  });

  it('skips a re-import, and refuses a row that differs from the one stored', async () => {
    const again = await b.call('POST', '/admin/tenants/acme/rows', { key: OP, body: { rows: exported } });
    expect(again.status).toBe(200);
    expect(again.json.stored).toBe(0);
    expect(again.json.skipped).toBe(exported.length);
    const node = exported.find((r) => r.table === 'node' && r.id === 'rain');
    const changed = await b.call('POST', '/admin/tenants/acme/rows', { key: OP, body: { rows: [{ ...node, statement: 'changed' }] } });
    expect(changed.status).toBe(409);
    expect(changed.json.detail.why).toContain('"rain"');
    expect(changed.json.detail.tseq).toBe(node.tseq);
    const stray = await b.call('POST', '/admin/tenants/acme/rows', { key: OP, body: { rows: [{ ...node, tenant: 'beta' }] } });
    expect(stray.status).toBe(422);
    const bad = await b.call('POST', '/admin/tenants/acme/rows', { key: OP, body: { rows: [{ ...node, tseq: 'x' }] } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail.loc).toEqual(['body', 'rows', 0, 'tseq']);
  });

  it('deletes the copy only with force (no placement), and nothing of it comes back after a restart', async () => {
    expect((await b.call('DELETE', '/admin/tenants/acme', { key: OP })).status).toBe(409);
    const gone = await b.call('DELETE', '/admin/tenants/acme', { key: OP, query: { force: 'true' } });
    expect(gone.status).toBe(200);
    expect(gone.json.deleted).toBe(exported.length + 1);
    const empty = async (t: TestApp): Promise<void> => {
      expect((await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: '2100-01-01' } })).json.items).toEqual([]);
      const found = await t.call('POST', '/v1/search', { key: 'ka', body: { as_of: '2100-01-01', query: 'rain flood river note' } });
      expect(found.status).toBe(200);
      expect(found.json.results).toEqual([]);
      expect((await t.call('GET', '/admin/tenants/acme/digest', { key: OP })).json.rows).toBe(0);
    };
    await empty(b);
    const dir = b.dir;
    await b.stop();
    stopped.push(dir);
    b = await startTestApp(env, dir);
    await empty(b);
    // The copy can be made again from the start.
    expect(await importAll(b, 'acme', exported, 50)).toEqual({ stored: exported.length, skipped: 0 });
    expect((await b.call('GET', '/admin/tenants/acme/digest', { key: OP })).json).toEqual(
      (await a.call('GET', '/admin/tenants/acme/digest', { key: OP })).json,
    );
  });

  it('checks a page against the store again once the tenant was written here between two pages', async () => {
    // An import trusts the last row it stored while only imports wrote the tenant; a write here ends that.
    expect((await b.call('DELETE', '/admin/tenants/acme', { key: OP, query: { force: 'true' } })).status).toBe(200);
    const half = Math.floor(exported.length / 2);
    expect(await importAll(b, 'acme', exported.slice(0, half), 5)).toEqual({ stored: half, skipped: 0 });
    await write(b, { space: 'user:1', nodes: [{ id: 'between-pages', kind: 'claim', statement: 'written between two pages' }] });
    const local = (await b.call('GET', '/admin/tenants/acme/rows', { key: OP, query: { after: exported[half - 1].tseq } })).json.rows;
    expect(local.map((r: any) => r.id)).toContain('between-pages');
    expect(local.at(-1).tseq).toBeGreaterThan(exported[half].tseq);
    const rest = await b.call('POST', '/admin/tenants/acme/rows', { key: OP, body: { rows: exported.slice(half) } });
    expect(rest.status, JSON.stringify(rest.json)).toBe(409);
    expect(rest.json.detail.why).toContain('is not held here');
  });
});
