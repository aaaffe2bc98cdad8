// End to end over HTTP against the real server process: keys and tenants, every refusal reason, the
// error shapes, and no 500 for any input however malformed.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../evals/lib/spawn-server.ts';
import { EDGE_TYPES } from '../storage/types.ts';
import { LAG_FORMS } from '../storage/log/write-plan.ts';

const KEY_A = 'key-alpha-0123456789';
const KEY_B = 'key-beta-9876543210';
let hosted: ServerProcess;
let open: ServerProcess;

beforeAll(async () => {
  [hosted, open] = await Promise.all([
    spawnServer({ env: { SVC_API_KEYS: `${KEY_A}=alpha,${KEY_B}=beta` } }),
    spawnServer({ env: { SVC_TENANT: 'solo' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([hosted?.stop(), open?.stop()]);
  for (const s of [hosted, open]) if (s) rmSync(s.dataDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  json: any;
  text: string;
  headers: Headers;
}

async function call(
  server: ServerProcess,
  method: string,
  path: string,
  opts: { key?: string | null; body?: unknown; raw?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const key = opts.key === undefined ? KEY_A : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const r = await fetch(`${server.base}${path}`, { method, headers, body });
  const text = await r.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, json, text, headers: r.headers };
}

const post = (body: unknown, key?: string | null) => call(hosted, 'POST', '/v1/memories', { body, key });
const postRaw = (raw: string) => call(hosted, 'POST', '/v1/memories', { raw });
const get = (path: string, key?: string | null) => call(hosted, 'GET', path, { key });
const NOW = () => encodeURIComponent(new Date(Date.now() + 5_000).toISOString());

describe('keys and tenants', () => {
  it('keeps /v1/version open', async () => {
    const r = await get('/v1/version', null);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'memory-ledger', api: 'v1' });
  });
  it('answers 401 SVC_UNAUTHORIZED without a key or with a wrong one, on every route', async () => {
    for (const key of [null, 'wrong', `${KEY_A}x`, '']) {
      for (const [method, path] of [
        ['GET', `/v1/memories?as_of=${NOW()}`],
        ['POST', '/v1/memories'],
        ['GET', '/v1/check_install'],
        ['GET', '/v1/memories/x?as_of=2024-01-01'],
        ['DELETE', '/v1/memories/x'],
      ] as const) {
        const r = await call(hosted, method, path, { key, body: method === 'POST' ? { space: 's', nodes: [] } : undefined });
        expect(r.status, `${method} ${path} key=${key}`).toBe(401);
        expect(r.json).toEqual({ detail: { error: 'SVC_UNAUTHORIZED', why: expect.stringContaining('Bearer') } });
        expect(r.headers.get('www-authenticate')).toBe('Bearer');
      }
    }
  });
  it('needs no key on an open deployment and uses SVC_TENANT', async () => {
    const w = await call(open, 'POST', '/v1/memories', { key: null, body: { space: 's', nodes: [{ id: 'o1', kind: 'claim' }] } });
    expect(w.json.accepted).toBe(1);
    const r = await call(open, 'GET', `/v1/memories/o1?as_of=${NOW()}`, { key: null });
    expect(r.json.item.tenant).toBe('solo');
  });
  it("never reads a tenant from input, and another tenant's ids answer absent", async () => {
    const w = await post({
      space: 'iso',
      tenant: 'beta',
      nodes: [{ id: 'secret', kind: 'claim', statement: 'alpha only', tenant: 'beta' }],
    });
    expect(w.json.accepted).toBe(1);
    const mine = await get(`/v1/memories/secret?as_of=${NOW()}`);
    expect(mine.json.item.tenant).toBe('alpha');
    for (const asOf of [NOW(), '2000-01-01']) {
      const theirs = await get(`/v1/memories/secret?as_of=${asOf}`, KEY_B);
      expect(theirs.status).toBe(200);
      expect(theirs.json.reason).toBe('absent');
      expect(theirs.json.certificate.masked).toBeUndefined();
    }
    const list = await get(`/v1/memories?as_of=${NOW()}&tenant=alpha`, KEY_B);
    expect(list.json.items.map((n: { id: string }) => n.id)).not.toContain('secret');
    const past = await get('/v1/memories/secret?as_of=2000-01-01');
    expect(past.json.reason).toBe('not_yet');
  });
});

describe('writes', () => {
  it('refuses rows by name and writes the rest', async () => {
    await post({ space: 'w', nodes: [{ id: 'w1', kind: 'claim', valid_from: '2024-01-01T00:00:00Z', valid_to: '2024-02-01T00:00:00Z' }] });
    const r = await post({
      space: 'w',
      nodes: [
        { id: 'w2', kind: 'claim' },
        { id: 'w3', kind: 'claim', captured_at: '2024-01-01T00:00:00Z' },
        { id: 'w1', kind: 'claim', statement: 'changed', valid_from: '2024-01-15T00:00:00Z' },
        { id: 'w1', kind: 'claim', statement: 'adjacent', valid_from: '2024-02-01T00:00:00Z', valid_to: '2024-03-01T00:00:00Z' },
      ],
      edges: [
        { source_id: 'w2', target_id: 'w1', edge_type: 'SUPERSEDES', lag: '36 hours' },
        { source_id: 'w2', target_id: 'ghost', edge_type: 'CAUSES' },
        { source_id: 'w2', target_id: 'w1', edge_type: 'CAUSES', lag: 'a little while later' },
        { source_id: 'w2', target_id: 'w1', edge_type: 'IS_LIKE' },
        { source_id: 'w2', target_id: 'w1', edge_type: 'SUPPORTS', captured_at: '2024-01-01T00:00:00Z' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.json.accepted).toBe(3);
    expect(r.json.ids).toEqual(['w2', 'w1']);
    expect(r.json.refused).toEqual([
      { id: 'w3', kind: 'node', reason: 'captured_at_not_allowed' },
      { id: 'w1', kind: 'node', reason: 'id_conflict' },
      { id: 'w2->ghost', kind: 'edge', reason: 'missing_endpoint' },
      { id: 'w2->w1', kind: 'edge', reason: 'invalid_lag', expected: LAG_FORMS },
      { id: 'w2->w1', kind: 'edge', reason: 'unknown_edge_type', allowed: [...EDGE_TYPES] },
      { id: 'w2->w1', kind: 'edge', reason: 'captured_at_not_allowed' },
    ]);
    const g = await get(`/v1/memories/w2?as_of=${NOW()}`);
    expect(g.json.edges.out).toEqual([expect.objectContaining({ target_id: 'w1', edge_type: 'SUPERSEDES', lag: 'P1DT12H' })]);
  });
  it('is idempotent by content', async () => {
    const body = { space: 'idem', nodes: [{ kind: 'claim', statement: 'said once', asserted_at: '2024-05-01T10:00:00+02:00' }] };
    const first = await post(body);
    const again = await post(body);
    expect(first.json.accepted).toBe(1);
    expect(again.json.accepted).toBe(0);
    expect(again.json.warnings).toEqual([{ id: first.json.ids[0], kind: 'node', warning: 'already_remembered' }]);
  });
  it('records a backfill batch and shows it in certificates', async () => {
    const w = await post({
      space: 'bf',
      backfill: { declared_captured_at: '2023-06-01T00:00:00Z', reason: 'crm import' },
      nodes: [{ id: 'bf1', kind: 'entity' }],
    });
    expect(w.json.batch).toMatchObject({ declared_captured_at: '2023-06-01T00:00:00.000000Z', reason: 'crm import' });
    const seen = await get('/v1/memories?as_of=2023-06-01&space=bf');
    expect(seen.json.items.map((n: { id: string }) => n.id)).toEqual(['bf1']);
    expect(seen.json.certificate.backfill).toEqual({ batches: 1, rows: 1 });
    const before = await get('/v1/memories?as_of=2023-05-31T23:59:59.999999Z&space=bf');
    expect(before.json.items).toEqual([]);
    expect(before.json.masked).toEqual({ node: 1, edge: 0, verdict: 0 });
    const future = await post({
      space: 'bf',
      backfill: { declared_captured_at: '2199-01-01T00:00:00Z', reason: 'x' },
      nodes: [{ id: 'bf2', kind: 'entity' }],
    });
    expect(future.status).toBe(422);
    expect(future.json.detail[0].loc).toEqual(['body', 'backfill', 'declared_captured_at']);
  });
});

describe('errors', () => {
  it('answers 422 naming the field', async () => {
    const cases: [unknown, (string | number)[]][] = [
      [{ nodes: [] }, ['body', 'space']],
      [{ space: 5 }, ['body', 'space']],
      [{ space: 's', nodes: 'x' }, ['body', 'nodes']],
      [{ space: 's', nodes: [{ id: 'x' }] }, ['body', 'nodes', 0, 'kind']],
      [{ space: 's', nodes: [{ kind: 'claim', asserted_at: '2024-01-01T00:00:00' }] }, ['body', 'nodes', 0, 'asserted_at']],
      [
        { space: 's', nodes: [{ kind: 'claim', valid_from: '2024-02-01T00:00:00Z', valid_to: '2024-01-01T00:00:00Z' }] },
        ['body', 'nodes', 0, 'valid_to'],
      ],
      [{ space: 's', nodes: [{ kind: 'claim', payload: 'text' }] }, ['body', 'nodes', 0, 'payload']],
      [{ space: 's', nodes: [{ kind: 'claim', payload: [1, 2] }] }, ['body', 'nodes', 0, 'payload']],
      [
        { space: 's', edges: [{ source_id: 'a', target_id: 'b', edge_type: 'CAUSES', confidence: 'high' }] },
        ['body', 'edges', 0, 'confidence'],
      ],
      [{ space: 's', nodes: [[]] }, ['body', 'nodes', 0]],
      [{ space: 's', backfill: [] }, ['body', 'backfill']],
      [{ space: 's', backfill: { declared_captured_at: '2024-01-01', reason: 'x' } }, ['body', 'backfill', 'declared_captured_at']],
      [{ space: 's', nodes: [{ id: 'x'.repeat(2000), kind: 'claim' }] }, ['body', 'nodes', 0, 'id']],
    ];
    for (const [body, loc] of cases) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body).slice(0, 100)).toBe(422);
      expect(
        r.json.detail.map((d: { loc: unknown }) => d.loc),
        JSON.stringify(body).slice(0, 100),
      ).toContainEqual(loc);
      for (const d of r.json.detail) expect(d).toMatchObject({ type: expect.any(String), msg: expect.any(String) });
    }
  });
  it('answers 400 SVC_AS_OF_REQUIRED before any other validation', async () => {
    for (const path of [
      '/v1/memories',
      '/v1/memories?limit=abc&valid_at=nonsense',
      '/v1/memories?as_of=',
      '/v1/memories/x',
      '/v1/memories/x?valid_at=bad',
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.json.detail.error, path).toBe('SVC_AS_OF_REQUIRED');
    }
  });
  it('answers 400 SVC_BAD_TIMESTAMP for a query instant without offset or out of range', async () => {
    for (const q of [
      'as_of=2024-01-01T00:00:00',
      'as_of=yesterday',
      'as_of=2024-02-30',
      `as_of=${NOW()}&valid_at=2024-01-01T00:00:00`,
      'as_of=9999-01-01T00:00:00Z',
    ]) {
      const r = await get(`/v1/memories?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.detail.error, q).toBe('SVC_BAD_TIMESTAMP');
    }
    const one = await get('/v1/memories/x?as_of=2024-01-01T00:00:00');
    expect(one.json.detail.error).toBe('SVC_BAD_TIMESTAMP');
  });
  it('answers 404 for unknown routes and 501 for DELETE', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nothing'],
      ['POST', '/v1/nothing'],
      ['GET', '/nothing'],
      ['GET', '/v1/memories/a/b/c'],
      ['PUT', '/v1/memories'],
    ] as const) {
      const r = await call(hosted, method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json.detail.error).toBe('not_found');
    }
    const d = await call(hosted, 'DELETE', '/v1/memories/w1');
    expect(d.status).toBe(501);
    expect(d.json.detail.error).toBe('append_only');
  });
});

describe('no 500 for any input', () => {
  const deep = (n: number, open: string, close: string, inner = '1'): string => open.repeat(n) + inner + close.repeat(n);
  const raws: [string, string][] = [
    ['malformed JSON', '{"space": "s", nodes: ['],
    ['truncated', '{"space"'],
    ['array body', '[]'],
    ['string body', '"hello"'],
    ['number body', '12'],
    ['null body', 'null'],
    [
      'huge number',
      '{"space":"s","nodes":[{"kind":"claim","payload":{"n":1e400},"fact_value":-1e400}],"edges":[{"source_id":"a","target_id":"b","edge_type":"CAUSES","confidence":1e400}]}',
    ],
    ['100k-deep array', `{"space":"s","nodes":${deep(100_000, '[', ']')}}`],
    ['100k-deep payload', `{"space":"s","nodes":[{"kind":"claim","payload":{"a":${deep(100_000, '[', ']')}}}]}`],
    ['100k-deep objects', `{"space":"s","nodes":[{"kind":"claim","payload":${deep(100_000, '{"a":', '}', '1')}}]}`],
    ['deep fact_value', `{"space":"s","nodes":[{"kind":"claim","fact_key":"f","fact_value":${deep(1000, '[', ']')}}]}`],
    ['invalid utf-8 escapes', '{"space":"s\\ud800","nodes":[{"kind":"claim","statement":"\\udfff"}]}'],
    ['NUL in strings', '{"space":"s\\u0000","nodes":[{"id":"nul\\u0000id","kind":"claim","statement":"a\\u0000b\\n\\"q\\""}]}'],
  ];
  for (const [name, raw] of raws) {
    it(`POST ${name}`, async () => {
      const r = await postRaw(raw);
      if (process.env.SHOW_STATUS) console.log(name, r.status, r.text.slice(0, 200));
      expect(r.status).toBeGreaterThanOrEqual(200);
      expect(r.status).toBeLessThan(500);
      if (r.status !== 200) expect(r.json.detail).toBeDefined();
    });
  }
  it('accepts 1 MB strings where text is free and refuses them where it is bounded', async () => {
    const mb = 'é'.repeat(512 * 1024);
    const ok = await post({ space: 'big', nodes: [{ id: 'big1', kind: 'claim', statement: mb, payload: { text: mb } }] });
    expect(ok.status).toBe(200);
    expect(ok.json.accepted).toBe(1);
    const g = await get(`/v1/memories/big1?as_of=${NOW()}`);
    expect(g.json.item.statement).toBe(mb);
    for (const body of [
      { space: mb },
      { space: 's', nodes: [{ kind: mb }] },
      { space: 's', nodes: [{ kind: 'claim', asserted_at: mb }] },
    ]) {
      const r = await post(body);
      expect(r.status).toBe(422);
    }
    const q = await get(`/v1/memories?as_of=${'9'.repeat(100_000)}`);
    expect(q.status).toBeGreaterThanOrEqual(400);
    expect(q.status).toBeLessThan(500);
  });
  it('keeps unicode and slashes in ids', async () => {
    const ids = ['a/b', 'ü😀 ünïcödé', 'x%2Fy', '../etc/passwd', 'q?x=1&y#z', ' spaced '];
    const w = await post({ space: 'uni', nodes: ids.map((id) => ({ id, kind: 'entity' })) });
    expect(w.json.accepted).toBe(ids.length);
    for (const id of ids) {
      const r = await get(`/v1/memories/${encodeURIComponent(id)}?as_of=${NOW()}`);
      expect(r.status, id).toBe(200);
      expect(r.json.item?.id, id).toBe(id);
    }
    const bad = await get(`/v1/memories/%E0%A4%A?as_of=${NOW()}`);
    expect(bad.status).toBeLessThan(500);
  });
  it('refuses wrong query types without a 500', async () => {
    for (const q of [
      'limit=0',
      'limit=-1',
      'limit=abc',
      'limit=1e400',
      'limit=100000',
      'cursor=%%%',
      'cursor=bm90IGEgY3Vyc29y',
      'kind=',
      'as_of=2024-01-01&as_of=x',
    ]) {
      const r = await get(`/v1/memories?as_of=${NOW()}&${q}`);
      expect(r.status, q).toBeLessThan(500);
    }
    const r = await get(`/v1/memories?as_of=${NOW()}&limit=0`);
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(['query', 'limit']);
  });
});

describe('server log', () => {
  it('recorded no internal error for any of the inputs above', () => {
    expect(hosted.log()).not.toMatch(/internal error|unhandled error/);
  });
});

describe('paging', () => {
  it('is stable while writes go on', async () => {
    await post({ space: 'page', nodes: Array.from({ length: 40 }, (_, i) => ({ id: `p${i}`, kind: 'claim', statement: `p${i}` })) });
    const asOf = encodeURIComponent(new Date(Date.now() + 2).toISOString().replace('Z', '999Z'));
    await new Promise((r) => setTimeout(r, 5));
    const whole = await get(`/v1/memories?as_of=${asOf}&space=page&limit=1000`);
    expect(whole.json.items).toHaveLength(40);
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const page: Answer = await get(`/v1/memories?as_of=${asOf}&space=page&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.json.items.map((n: { id: string }) => n.id));
      cursor = page.json.next_cursor;
      // Writes between pages, including a new version of an id already seen.
      await post({
        space: 'page',
        nodes: [
          { id: `late${round}`, kind: 'claim' },
          { id: `p${round}`, kind: 'claim', statement: 'new', valid_from: '2199-01-01T00:00:00Z' },
        ],
      });
      round++;
    } while (cursor);
    expect(seen).toEqual(whole.json.items.map((n: { id: string }) => n.id));
    const now = await get(`/v1/memories?as_of=${NOW()}&space=page&limit=1000`);
    expect(now.json.items.length).toBeGreaterThan(40);
  });
});
