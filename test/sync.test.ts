// Round-trip sync between two servers on real Kuzu (in-process, reached through a fetch that calls each
// app): A → pull → push into a fresh B → export B gives the same nodes and edges with the same known_at;
// a repeated push writes nothing; resolutions are never pushed; large pushes split under the limits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSyncCli } from '../server/sync-cli.ts';
import { pull, push, SyncError, type Fetch } from '../server/sync.ts';
import { readJsonl } from '../storage/bundle/reader.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

let a: TestApp, b: TestApp;
let fetchBoth: Fetch;
const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'ledger-test-sync-'));
  dirs.push(d);
  return d;
};
const quiet = { progress: () => undefined };
const KEYS = 'ka=alpha,kbig=big,ksmall=small,kshed=shed';

beforeAll(async () => {
  a = await startTestApp({ SVC_API_KEYS: KEYS });
  b = await startTestApp({ SVC_API_KEYS: KEYS });
  fetchBoth = async (input, init) => {
    const url = new URL(input);
    const target = url.host === 'a.test' ? a : url.host === 'b.test' ? b : null;
    if (!target) throw new Error(`no server at ${url.host}`);
    return target.app.request(url.toString(), init);
  };
  const w = async (body: unknown, key = 'ka'): Promise<void> => {
    const r = await a.call('POST', '/v1/memories', { key, body });
    expect(r.json.refused).toEqual([]);
  };
  await w({
    space: 'w',
    nodes: [
      { id: 'n1', kind: 'claim', statement: 'rain', category: 'weather', payload: { source: 'wire', n: [1, 2] } },
      { id: 'n2', kind: 'claim', statement: 'rate 4.5', fact_key: 'rate', fact_value: 4.5, asserted_at: '2024-01-01T00:00:00Z' },
      { id: 'v', kind: 'factor', statement: 'v1', asserted_at: '2024-01-01T00:00:00Z', valid_to: '2024-02-01T00:00:00Z' },
    ],
    edges: [{ source_id: 'n1', target_id: 'n2', edge_type: 'CAUSES', lag: '36 hours', confidence: 0.5, mechanism: 'm' }],
  });
  // Backfilled before n1 was known, yet pointing at it: pushed after the nodes it needs.
  await w({
    space: 'w',
    backfill: { declared_captured_at: '2023-05-01T12:00:00Z', reason: 'crm import' },
    nodes: [{ id: 'bf1', kind: 'entity', statement: 'Acme', asserted_at: '2023-04-01T00:00:00Z' }],
    edges: [{ source_id: 'bf1', target_id: 'n1', edge_type: 'MENTIONS', asserted_at: '2023-04-01T00:00:00Z' }],
  });
  await w({
    space: 'w',
    nodes: [{ id: 'v', kind: 'factor', statement: 'v2', asserted_at: '2024-02-01T00:00:00Z' }],
    edges: [{ source_id: 'v', target_id: 'n1', edge_type: 'SUPPORTS' }],
  });
  await w({
    space: 'x',
    backfill: { declared_captured_at: '2024-03-01T00:00:00Z', reason: 'second import' },
    nodes: [{ id: 'x1', kind: 'claim', statement: 'elsewhere' }],
    edges: [{ source_id: 'x1', target_id: 'n2', edge_type: 'CONTRADICTS' }],
  });
  await a.call('POST', '/v1/facts', { key: 'ka', body: { fact_key: 'rate' } });
  const now = (await a.call('GET', '/v1/memories', { key: 'ka', query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of;
  await a.call('POST', '/v1/resolve', { key: 'ka', body: { fact: 'rate', as_of: now } });
});

afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await a?.close();
  await b?.close();
});

async function rows(dir: string, file: string): Promise<Record<string, any>[]> {
  const out: Record<string, any>[] = [];
  for await (const l of readJsonl(join(dir, file))) out.push(l.value as Record<string, any>);
  return out;
}

/** Rows without their attestation (capture instants and batch ids differ between ledgers), sorted. */
const comparable = (list: Record<string, any>[]): string[] => list.map(({ attestation: _a, ...rest }) => JSON.stringify(rest)).sort();

describe('pull and push', () => {
  it('A → pull → push into a fresh B → export B: the same nodes and edges with the same known_at; no resolutions', async () => {
    const dirA = tmp();
    const pulled = await pull('http://a.test', dirA, { apiKey: 'ka', fetch: fetchBoth, ...quiet });
    expect(pulled.manifest.counts).toEqual({ nodes: 6, edges: 4, resolutions: 1, invalidations: 0 });
    const report = await push(dirA, 'http://b.test/', { apiKey: 'ka', fetch: fetchBoth, ...quiet });
    expect(report.refused).toEqual([]);
    expect(report.accepted).toBe(10);
    // Four batches: the two declared imports and the two unbatched writes (one per knowledge instant);
    // the edges of the two imports point at nodes learned later (n1, n2), so each waits for them in a
    // second request under its batch's declaration.
    expect(report.batches).toBe(4);
    expect(report.requests).toBe(6);

    const dirB = tmp();
    await pull('http://b.test', dirB, { apiKey: 'ka', fetch: fetchBoth, ...quiet });
    const [nodesA, nodesB, edgesA, edgesB] = await Promise.all([
      rows(dirA, 'nodes.jsonl'),
      rows(dirB, 'nodes.jsonl'),
      rows(dirA, 'edges.jsonl'),
      rows(dirB, 'edges.jsonl'),
    ]);
    expect(comparable(nodesB)).toEqual(comparable(nodesA));
    expect(comparable(edgesB)).toEqual(comparable(edgesA));
    expect(await rows(dirB, 'resolutions.jsonl')).toEqual([]);
    const n1A = nodesA.find((n) => n.id === 'n1'),
      n1B = nodesB.find((n) => n.id === 'n1');
    expect(n1B?.known_at).toBe(n1A?.known_at);
    expect(n1B?.attestation.captured_at).not.toBe(n1A?.attestation.captured_at);
    expect(n1B?.attestation.batch?.declared_captured_at).toBe(n1A?.known_at);
    expect(nodesB.find((n) => n.id === 'bf1')?.attestation.batch.reason).toBe('crm import');

    const again = await push(dirA, 'http://b.test', { apiKey: 'ka', fetch: fetchBoth, ...quiet });
    expect(again).toMatchObject({ requests: 0, accepted: 0, skipped: 10, refused: [] });
    const forced = await push(dirA, 'http://b.test', { apiKey: 'ka', fetch: fetchBoth, diff: false, ...quiet });
    expect(forced).toMatchObject({ accepted: 0, warnings: 10, refused: [] });
    const back = await push(dirA, 'http://a.test', { apiKey: 'ka', fetch: fetchBoth, ...quiet });
    expect(back).toMatchObject({ requests: 0, accepted: 0, refused: [] });
    const dirB2 = tmp();
    await pull('http://b.test', dirB2, { apiKey: 'ka', fetch: fetchBoth, ...quiet });
    expect((await rows(dirB2, 'nodes.jsonl')).length).toBe(6);
  });

  it('a space-scoped pull pushes that space only', async () => {
    const dir = tmp();
    await pull('http://a.test', dir, { apiKey: 'ka', fetch: fetchBoth, space: 'x', ...quiet });
    expect((await rows(dir, 'nodes.jsonl')).map((n) => n.id)).toEqual(['x1']);
    expect(await rows(dir, 'edges.jsonl')).toEqual([]);
  });

  it('sends a batch again after a 503 with Retry-After (a server shedding load), and writes it once', async () => {
    const dir = tmp();
    await pull('http://a.test', dir, { apiKey: 'ka', fetch: fetchBoth, space: 'x', ...quiet });
    let shed = 0;
    const sheddingOnce: Fetch = async (input, init) => {
      if (init?.method === 'POST' && shed === 0) {
        shed++;
        return Response.json(
          { detail: { error: 'overloaded', why: 'busy', retry_after: 1 } },
          { status: 503, headers: { 'retry-after': '1' } },
        );
      }
      return fetchBoth(input, init);
    };
    const report = await push(dir, 'http://b.test', { apiKey: 'kshed', fetch: sheddingOnce, ...quiet });
    expect(shed).toBe(1);
    expect(report).toMatchObject({ accepted: 1, refused: [] });
    const back = tmp();
    await pull('http://b.test', back, { apiKey: 'kshed', fetch: fetchBoth, space: 'x', ...quiet });
    expect((await rows(back, 'nodes.jsonl')).map((n) => n.id)).toEqual(['x1']);
  });

  it('splits a large batch under the 10,000-row limit; --granularity day declares each day at its latest known_at', async () => {
    const many = (from: number, n: number): unknown[] =>
      Array.from({ length: n }, (_, i) => ({ id: `r${from + i}`, kind: 'claim', statement: `row ${from + i}` }));
    expect((await a.call('POST', '/v1/memories', { key: 'kbig', body: { space: 'bulk', nodes: many(0, 10_000) } })).json.accepted).toBe(
      10_000,
    );
    expect((await a.call('POST', '/v1/memories', { key: 'kbig', body: { space: 'bulk', nodes: many(10_000, 2_500) } })).json.accepted).toBe(
      2_500,
    );
    const dir = tmp();
    await pull('http://a.test', dir, { apiKey: 'kbig', fetch: fetchBoth, ...quiet });
    const source = await rows(dir, 'nodes.jsonl');
    const days = new Map<string, string>();
    for (const n of source) {
      const d = String(n.known_at).slice(0, 10);
      if ((days.get(d) ?? '') < n.known_at) days.set(d, n.known_at);
    }
    const seen: number[] = [];
    const report = await push(dir, 'http://b.test', {
      apiKey: 'kbig',
      fetch: fetchBoth,
      granularity: 'day',
      progress: (_l, done) => {
        seen.push(done);
      },
    });
    expect(report).toMatchObject({ accepted: 12_500, batches: days.size, refused: [] });
    expect(report.requests).toBe(days.size + 1);
    expect(seen.at(-1)).toBe(12_500);
    const out = tmp();
    await pull('http://b.test', out, { apiKey: 'kbig', fetch: fetchBoth, ...quiet });
    const pushed = await rows(out, 'nodes.jsonl');
    expect(pushed.length).toBe(12_500);
    expect(new Set(pushed.map((n) => n.known_at))).toEqual(new Set(days.values()));
  });

  it('honours a smaller row limit per request', async () => {
    const dir = tmp();
    await pull('http://a.test', dir, { apiKey: 'ka', fetch: fetchBoth, space: 'w', ...quiet });
    const report = await push(dir, 'http://b.test', { apiKey: 'ksmall', fetch: fetchBoth, maxRows: 2, ...quiet });
    expect(report.accepted).toBe(8);
    expect(report.refused).toEqual([]);
    expect(report.requests).toBeGreaterThanOrEqual(4);
  });

  it('fails clearly on a refused key or a missing folder', async () => {
    const err = await pull('http://a.test', tmp(), { apiKey: 'wrong', fetch: fetchBoth, ...quiet }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SyncError);
    expect((err as SyncError).status).toBe(401);
    await expect(push(join(tmp(), 'nothing'), 'http://b.test', { apiKey: 'ka', fetch: fetchBoth, ...quiet })).rejects.toThrow(/manifest/);
  });

  it('the commands check their arguments before any request', async () => {
    const run = async (cmd: 'pull' | 'push', args: string[]): Promise<[number, string]> => {
      let err = '';
      const code = await runSyncCli(
        cmd,
        args,
        {
          out: () => undefined,
          err: (s) => {
            err += s;
          },
        },
        {},
      );
      return [code, err];
    };
    expect(await run('pull', ['not a url', tmp()])).toEqual([2, expect.stringContaining('BASE_URL')]);
    expect(await run('pull', ['http://a.test', tmp(), '--as-of', 'soon'])).toEqual([2, expect.stringContaining('--as-of')]);
    expect(await run('push', [tmp(), 'http://b.test', '--granularity', 'hour'])).toEqual([2, expect.stringContaining('--granularity')]);
    expect((await run('push', [tmp()]))[0]).toBe(2);
  });
});
