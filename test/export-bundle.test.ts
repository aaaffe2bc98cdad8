// The offline reader (`memory-ledger bundle`) on exported archives: list/get/why answer as the server does
// at the same as_of, and verify passes a server bundle and reports each kind of tampering with its row.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBundleCli } from '../server/bundle-cli.ts';
import { unpackFile } from '../storage/bundle/archive-files.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { exportArchive, saveArchive } from './helpers/bundle.ts';

let t: TestApp;
let now = '';
let mid = '';
let file = '';
const cleanup: string[] = [];

async function cli(args: string[]): Promise<{ code: number; out: string; err: string; json: any }> {
  let out = '',
    err = '';
  const code = await runBundleCli(args, {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
  });
  let json: unknown = null;
  try {
    json = JSON.parse(out);
  } catch {
    /* not JSON */
  }
  return { code, out, err, json };
}

const noTx = (body: any): any => {
  const copy = structuredClone(body);
  delete copy.certificate.tx_as_of;
  return copy;
};

const serverNow = async (): Promise<string> =>
  (await t.call('GET', '/v1/memories', { query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of;

beforeAll(async () => {
  t = await startTestApp();
  const w = async (body: unknown): Promise<void> => {
    const r = await t.call('POST', '/v1/memories', { body });
    expect(r.json.refused).toEqual([]);
  };
  await w({
    space: 'w',
    backfill: { declared_captured_at: '2023-05-01T12:00:00Z', reason: 'crm import' },
    nodes: [{ id: 'old', kind: 'claim', statement: 'old cause', asserted_at: '2023-04-01T00:00:00Z' }],
  });
  await w({
    space: 'w',
    nodes: [
      { id: 'a', kind: 'claim', statement: 'drought', category: 'weather', asserted_at: '2024-01-01T00:00:00Z' },
      {
        id: 'b',
        kind: 'claim',
        statement: 'wheat up',
        category: 'prices',
        fact_key: 'wheat',
        fact_value: 300,
        asserted_at: '2024-02-01T00:00:00Z',
      },
    ],
    edges: [
      { source_id: 'a', target_id: 'b', edge_type: 'CAUSES', lag: 'P30D' },
      { source_id: 'old', target_id: 'a', edge_type: 'SUPPORTS' },
    ],
  });
  mid = await serverNow();
  await w({
    space: 'w',
    nodes: [{ id: 'c', kind: 'prediction', statement: 'bread up', asserted_at: '2024-03-01T00:00:00Z', valid_to: '2024-09-01T00:00:00Z' }],
    edges: [{ source_id: 'b', target_id: 'c', edge_type: 'TRIGGERS' }],
  });
  await w({
    space: 'z',
    nodes: [{ id: 'z1', kind: 'entity', statement: 'Other' }],
    edges: [{ source_id: 'z1', target_id: 'b', edge_type: 'CONTRADICTS' }],
  });
  await t.call('POST', '/v1/facts', { body: { fact_key: 'wheat' } });
  now = await serverNow();
  await t.call('POST', '/v1/resolve', { body: { fact: 'wheat', as_of: now } });
  now = await serverNow();
  const saved = saveArchive((await exportArchive(t, { as_of: now })).buf);
  cleanup.push(saved.dir);
  file = saved.file;
});

afterAll(async () => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
  await t?.close();
});

describe('memory-ledger bundle FILE list|get|why', () => {
  const instants = (): string[] => ['2023-05-01T12:00:00Z', '2023-06-01', mid, now];

  it('list answers as GET /v1/memories at the same as_of, valid_at, space, kind and category', async () => {
    const cases: Record<string, string>[] = [];
    for (const as_of of instants()) {
      cases.push(
        { as_of },
        { as_of, space: 'w' },
        { as_of, valid_at: '2024-06-01T00:00:00Z' },
        { as_of, valid_at: '2024-10-01T00:00:00Z' },
        { as_of, kind: 'claim' },
        { as_of, category: 'prices' },
      );
    }
    for (const q of cases) {
      const server = await t.call('GET', '/v1/memories', { query: { ...q, limit: 1000 } });
      const args = [file, 'list', '--as-of', q.as_of ?? '', '--limit', '1000'];
      for (const [k, flag] of [
        ['space', '--space'],
        ['valid_at', '--valid-at'],
        ['kind', '--kind'],
        ['category', '--category'],
      ] as const) {
        if (q[k] !== undefined) args.push(flag, q[k] ?? '');
      }
      const offline = await cli(args);
      expect(offline.code, offline.err).toBe(0);
      expect(noTx(offline.json), JSON.stringify(q)).toEqual(noTx(server.json));
    }
  });

  it('get and why answer as the server for every id, including not_yet and absent', async () => {
    for (const as_of of instants()) {
      for (const id of ['old', 'a', 'b', 'c', 'z1', 'nowhere']) {
        for (const extra of [[], ['--space', 'w'], ['--valid-at', '2024-10-01T00:00:00Z']]) {
          const query: Record<string, string> = { as_of };
          if (extra[0] === '--space') query.space = 'w';
          if (extra[0] === '--valid-at') query.valid_at = extra[1] ?? '';
          const path = `/v1/memories/${encodeURIComponent(id)}`;
          const sg = await t.call('GET', path, { query });
          const og = await cli([file, 'get', id, '--as-of', as_of, ...extra]);
          expect(noTx(og.json), `get ${id} ${JSON.stringify(query)}`).toEqual(noTx(sg.json));
          for (const depth of ['1', '3']) {
            const sw = await t.call('GET', `${path}/why`, { query: { ...query, depth } });
            const ow = await cli([file, 'why', id, '--as-of', as_of, '--depth', depth, ...extra]);
            expect(noTx(ow.json), `why ${id} ${JSON.stringify(query)}`).toEqual(noTx(sw.json));
          }
        }
      }
    }
  });

  it("defaults as_of to the bundle's exported_as_of and refuses a later one", async () => {
    const dflt = await cli([file, 'list']);
    expect(dflt.json.certificate.as_of).toBe(now);
    expect(dflt.json.items.length).toBe(5);
    const later = await cli([file, 'list', '--as-of', '2100-01-01']);
    expect(later.code).toBe(2);
    expect(later.err).toContain('exported_as_of');
  });

  it('bad flags and actions exit 2 with a message naming them', async () => {
    expect((await cli([file, 'list', '--as-of', 'yesterday'])).err).toContain('--as-of');
    expect((await cli([file, 'list', '--valid-at', '2024-01-01'])).code).toBe(2);
    expect((await cli([file, 'explode'])).err).toContain('unknown action');
    expect((await cli([file, 'get'])).err).toContain('needs an ID');
    expect((await cli([file, 'why', 'a', '--depth', '-1'])).err).toContain('--depth');
    expect((await cli([file, 'list', '--bogus'])).code).toBe(2);
    expect((await cli([join(tmpdir(), 'no-such-bundle.tar.gz'), 'list'])).code).toBe(1);
  });
});

describe('memory-ledger bundle FILE verify', () => {
  let dir = '';
  const files = (): Record<string, string> =>
    Object.fromEntries(
      ['manifest.json', 'nodes.jsonl', 'edges.jsonl', 'resolutions.jsonl'].map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
    );
  let original: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-test-verify-'));
    cleanup.push(dir);
    await unpackFile(file, dir, 1);
    original = files();
  });

  const restore = (): void => {
    for (const [f, text] of Object.entries(original)) writeFileSync(join(dir, f), text);
  };
  const lines = (f: string): any[] =>
    original[f]
      ?.split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)) ?? [];
  const put = (f: string, rows: unknown[]): void => writeFileSync(join(dir, f), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));

  it('a bundle exported by the server satisfies the five invariants (archive and folder)', async () => {
    restore();
    const fromFile = await cli([file, 'verify']);
    expect(fromFile.code, fromFile.out).toBe(0);
    expect(fromFile.json).toMatchObject({ ok: true, violations: [], counts: { nodes: 5, edges: 4, resolutions: 1 } });
    expect((await cli([dir, 'verify'])).json.ok).toBe(true);
  });

  it('reports a row whose known_at precedes its batch', async () => {
    restore();
    const nodes = lines('nodes.jsonl');
    const old = nodes.find((n) => n.id === 'old');
    old.known_at = '2023-01-01T00:00:00.000000Z';
    put('nodes.jsonl', nodes);
    const r = await cli([dir, 'verify']);
    expect(r.code).toBe(1);
    expect(r.json.violations).toHaveLength(1);
    expect(r.json.violations[0]).toMatchObject({
      invariant: 'attested_knowledge_time',
      file: 'nodes.jsonl',
      problem: expect.stringContaining('precedes its batch'),
      row: { id: 'old' },
    });
  });

  it('reports an edge of unknown type and an edge to a node the bundle lacks', async () => {
    restore();
    const edges = lines('edges.jsonl');
    edges[0].edge_type = 'BLAMES';
    edges[1].target_id = 'ghost';
    put('edges.jsonl', edges);
    const r = await cli([dir, 'verify']);
    expect(r.code).toBe(1);
    expect(r.json.violations.map((v: any) => [v.invariant, v.line])).toEqual([
      ['typed_edges', 1],
      ['typed_edges', 2],
    ]);
    expect(r.json.violations[0].row.edge_type).toBe('BLAMES');
    expect(r.json.violations[1].problem).toContain('ghost');
  });

  it('reports a fact row (a verdict) without a declaration', async () => {
    restore();
    const manifest = JSON.parse(original['manifest.json'] ?? '{}');
    manifest.declarations.facts = [];
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    const r = await cli([dir, 'verify']);
    expect(r.json.violations.length).toBeGreaterThan(0);
    expect(r.json.violations).toEqual(
      r.json.violations.map(() =>
        expect.objectContaining({
          invariant: 'declared_facts',
          file: 'resolutions.jsonl',
          row: expect.objectContaining({ fact_key: 'wheat' }),
        }),
      ),
    );
  });

  it('accepts a node carrying a fact_key that was never declared (the service accepts it too)', async () => {
    restore();
    const nodes = lines('nodes.jsonl');
    const b = nodes.find((n) => n.id === 'b');
    nodes.push({ ...b, id: 'undeclared-holder', fact_key: 'never_declared', fact_value: 1 });
    put('nodes.jsonl', nodes);
    const r = await cli([dir, 'verify']);
    expect(r.json.violations).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('reports a duplicated id with overlapping validity, and a duplicated edge', async () => {
    restore();
    const nodes = lines('nodes.jsonl');
    const c = nodes.find((n) => n.id === 'c');
    nodes.push({ ...c, statement: 'bread down', valid_from: '2024-08-01T00:00:00.000000Z', valid_to: null });
    nodes.push({
      ...c,
      statement: 'bread flat',
      valid_from: '2024-09-01T00:00:00.000000Z',
      valid_to: null,
      asserted_at: '2024-09-01T00:00:00.000000Z',
    });
    put('nodes.jsonl', nodes);
    const edges = lines('edges.jsonl');
    put('edges.jsonl', [...edges, edges[0]]);
    const r = await cli([dir, 'verify']);
    const found = r.json.violations.map((v: any) => [v.invariant, v.file, v.row.statement ?? v.row.edge_type]);
    expect(found).toEqual([
      ['append_only', 'nodes.jsonl', 'bread down'],
      ['append_only', 'nodes.jsonl', 'bread flat'],
      ['append_only', 'edges.jsonl', 'CAUSES'],
    ]);
  });

  it("reports broken clocks and rows learned after the export's as_of", async () => {
    restore();
    const nodes = lines('nodes.jsonl');
    nodes[1].valid_to = nodes[1].valid_from;
    nodes[2].asserted_at = '2024-02-01 00:00';
    nodes[3].known_at = '2100-01-01T00:00:00.000000Z';
    nodes[3].attestation.captured_at = nodes[3].known_at;
    put('nodes.jsonl', nodes);
    const r = await cli([dir, 'verify']);
    expect(r.json.violations.map((v: any) => [v.invariant, v.line])).toEqual([
      ['three_clocks', 2],
      ['three_clocks', 3],
      ['three_clocks', 4],
    ]);
  });
});
