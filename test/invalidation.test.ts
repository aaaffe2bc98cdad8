// Invalidation end to end (CONTRACT v1.x): the route's refusals, backfilled invalidations, reads before
// and after, resolve, why, the export and what the offline bundle reader and `verify` make of it, and a
// pull/push round trip that keeps each invalidation's known_at.
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pull, push, type Fetch } from '../server/sync.ts';
import { bundleGet, bundleList, bundleWhy } from '../storage/bundle/queries.ts';
import { loadBundleFolder } from '../storage/bundle/reader.ts';
import { verifyBundleFolder } from '../storage/bundle/verify.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { inMemoryClient } from './helpers/mcp-client.ts';

let a: TestApp, b: TestApp;
const KEYS = 'ka=alpha,kb=beta';
const tmpDirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'ledger-test-inv-'));
  tmpDirs.push(d);
  return d;
};
let fetchBoth: Fetch;
let after = '';

const post = (path: string, body: unknown, key = 'ka') => a.call('POST', path, { key, body });
const get = (path: string, query: Record<string, string | number | undefined>, key = 'ka') => a.call('GET', path, { key, query });

beforeAll(async () => {
  a = await startTestApp({ SVC_API_KEYS: KEYS });
  b = await startTestApp({ SVC_API_KEYS: KEYS });
  fetchBoth = async (input, init) => {
    const url = new URL(input);
    return (url.host === 'a.test' ? a : b).app.request(url.toString(), init);
  };
  const w = await post('/v1/memories', {
    space: 's',
    backfill: { declared_captured_at: '2024-04-01T00:00:00Z', reason: 'notes' },
    nodes: [
      { id: 'frost', kind: 'factor', statement: 'Frost hit the orchards', asserted_at: '2024-03-30T00:00:00Z' },
      {
        id: 'crop',
        kind: 'claim',
        statement: 'The apple crop failed',
        fact_key: 'crop',
        fact_value: 'failed',
        asserted_at: '2024-03-31T00:00:00Z',
      },
      { id: 'cider', kind: 'prediction', statement: 'Cider prices will climb', asserted_at: '2024-03-31T00:00:00Z' },
      {
        id: 'crop2',
        kind: 'claim',
        statement: 'The apple crop was normal',
        fact_key: 'crop',
        fact_value: 'normal',
        asserted_at: '2024-03-29T00:00:00Z',
      },
    ],
    edges: [
      { source_id: 'frost', target_id: 'crop', edge_type: 'CAUSES' },
      { source_id: 'crop', target_id: 'cider', edge_type: 'CAUSES' },
    ],
  });
  expect(w.json.refused).toEqual([]);
  await post('/v1/memories', { space: 'other', nodes: [{ id: 'elsewhere', kind: 'claim', statement: 'Another space' }] });
  await post('/v1/facts', { fact_key: 'crop' });
});

afterAll(async () => {
  await a.close();
  await b.close();
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

describe('POST /v1/memories/{id}/invalidate', () => {
  it('refuses bad bodies with 422 naming the field, and unknown ids with 404', async () => {
    for (const [body, field] of [
      [{}, 'reason'],
      [{ reason: '   ' }, 'reason'],
      [{ reason: 'x', colour: 'red' }, 'colour'],
      [{ reason: 'x', backfill: { declared_captured_at: '2999-01-01T00:00:00Z', reason: 'r' } }, 'declared_captured_at'],
    ] as const) {
      const r = await post('/v1/memories/crop/invalidate', body);
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.json.detail)).toContain(field);
    }
    // A backfill before the node was known would hide a node an earlier as_of did see.
    const early = await post('/v1/memories/crop/invalidate', {
      reason: 'x',
      backfill: { declared_captured_at: '2024-03-01T00:00:00Z', reason: 'r' },
    });
    expect(early.status).toBe(422);
    expect(early.json.detail[0].loc).toEqual(['body', 'backfill', 'declared_captured_at']);
    expect((await post('/v1/memories/nope/invalidate', { reason: 'x' })).status).toBe(404);
    expect((await post('/v1/memories/crop/invalidate', { reason: 'x' }, 'kb')).json.detail.error).toBe('not_found');
    // Nothing was written by any refusal.
    expect((await get('/v1/memories/crop', { as_of: 'now' })).json.item.id).toBe('crop');
  });

  it('records a backfilled invalidation with the declared known_at, then answers it again with a warning', async () => {
    const r = await post('/v1/memories/crop/invalidate', {
      reason: 'the grower corrected it',
      by: 'editor',
      backfill: { declared_captured_at: '2024-04-02T00:00:00Z', reason: 'late correction' },
    });
    expect(r.status).toBe(200);
    expect(r.json.invalidation).toMatchObject({
      target_id: 'crop',
      reason: 'the grower corrected it',
      by: 'editor',
      known_at: '2024-04-02T00:00:00.000000Z',
    });
    expect(r.json.batch).toMatchObject({ declared_captured_at: '2024-04-02T00:00:00.000000Z', reason: 'late correction' });
    const again = await post('/v1/memories/crop/invalidate', { reason: 'twice' });
    expect(again.json.warnings).toEqual([{ id: 'crop', warning: 'already_invalidated' }]);
    expect(again.json.invalidation.reason).toBe('the grower corrected it');
    after = (await a.call('GET', '/v1/version')).json.now;
  });

  it('reads between the declared instant and the capture see it; reads before it do not', async () => {
    const at = (t: string) => get('/v1/memories', { as_of: t, space: 's' });
    expect((await at('2024-04-01T12:00:00Z')).json.items.map((n: { id: string }) => n.id)).toContain('crop');
    const afterIt = await at('2024-04-03T00:00:00Z');
    expect(afterIt.json.items.map((n: { id: string }) => n.id)).not.toContain('crop');
    expect(afterIt.json.certificate.invalidated).toBe(1);
    const kept = await get('/v1/memories', { as_of: after, space: 's', include_invalidated: 'true' });
    expect(kept.json.items.find((n: { id: string }) => n.id === 'crop').invalidated).toMatchObject({
      reason: 'the grower corrected it',
      by: 'editor',
    });
    expect(kept.json.certificate.invalidated).toBeUndefined();
  });

  it('why and resolve leave it out; resolve answers from the other candidate', async () => {
    const why = await get('/v1/memories/frost/why', { as_of: after });
    expect(why.json.chain.map((l: { node: { id: string } }) => l.node.id)).toEqual(['frost']);
    const subject = await get('/v1/memories/crop/why', { as_of: after });
    expect(subject.json).toMatchObject({ chain: [], reason: 'invalidated' });
    const r = await post('/v1/resolve', { fact: 'crop', as_of: after });
    expect(r.json).toMatchObject({ status: 'answered', value: 'normal' });
    expect(r.json.certificate.invalidated).toBe(1);
    // Before its declared instant the retracted value still competes.
    const old = await post('/v1/resolve', { fact: 'crop', as_of: '2024-04-01T12:00:00Z' });
    expect(old.json.candidates.map((c: { id: string }) => c.id).sort()).toEqual(['crop', 'crop2']);
  });

  it('at an app-scoped MCP address only nodes of that space can be invalidated', async () => {
    const client = await inMemoryClient({ ledger: a.ledger, tenant: 'alpha', confinedSpace: 'other', services: a.started.services });
    const out = await client.callTool({ name: 'invalidate_memory', arguments: { id: 'cider', reason: 'not mine' } });
    expect(out.isError).toBe(true);
    expect((out._meta?.['memory-ledger/error'] as { error: string }).error).toBe('not_found');
    const mine = await client.callTool({ name: 'invalidate_memory', arguments: { id: 'elsewhere', reason: 'mine' } });
    expect(mine.isError).toBeFalsy();
    expect((await get('/v1/memories/cider', { as_of: 'now' })).json.item.id).toBe('cider');
    await client.close();
  });
});

describe('invalidations in the bundle', () => {
  it('are exported, applied by the bundle reader, checked by verify, and carried by pull/push with their known_at', async () => {
    const dir = tmp();
    await pull('http://a.test', dir, { asOf: after, space: 's', apiKey: 'ka', fetch: fetchBoth, progress: () => undefined });
    const lines = readFileSync(join(dir, 'invalidations.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      expect.objectContaining({
        target_id: 'crop',
        known_at: '2024-04-02T00:00:00.000000Z',
        attestation: expect.objectContaining({ batch: expect.anything() }),
      }),
    ]);
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).counts.invalidations).toBe(1);

    const bundle = await loadBundleFolder(dir);
    expect(bundleList(bundle, {}).items.map((n) => n.id)).not.toContain('crop');
    expect(bundleList(bundle, { asOf: Date.UTC(2024, 3, 1, 12) * 1000 }).items.map((n) => n.id)).toContain('crop');
    expect(bundleGet(bundle, 'crop', {})).toMatchObject({ item: null, reason: 'invalidated', invalidation: { target_id: 'crop' } });
    expect(bundleWhy(bundle, 'frost', {}).chain.map((l) => l.node.id)).toEqual(['frost']);
    expect((await verifyBundleFolder(dir)).ok).toBe(true);

    const pushed = await push(dir, 'http://b.test', { apiKey: 'ka', fetch: fetchBoth, progress: () => undefined });
    expect(pushed.invalidations).toBe(1);
    const onB = await b.call('GET', '/v1/memories/crop', { key: 'ka', query: { as_of: 'now' } });
    expect(onB.json).toMatchObject({ reason: 'invalidated', invalidation: { known_at: '2024-04-02T00:00:00.000000Z' } });
    expect((await push(dir, 'http://b.test', { apiKey: 'ka', fetch: fetchBoth, progress: () => undefined })).invalidations).toBe(0);

    // An invalidation of a node the bundle lacks breaks the new invariant.
    writeFileSync(join(dir, 'invalidations.jsonl'), `${JSON.stringify({ ...lines[0], target_id: 'ghost' })}\n`);
    const report = await verifyBundleFolder(dir);
    expect(report.ok).toBe(false);
    expect(report.violations.map((v) => v.invariant)).toContain('invalidations_name_nodes');
  });
});
