// GET /v1/export end to end on real Kuzu: the archive read back with node-tar, every field, the scoping
// rules (as_of, space, category, tenant), the export_ledger tool, and removal of the staged files.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_VERSION, SERVICE_VERSION } from '../server/version.ts';
import { BUNDLE_FORMAT_VERSION } from '../storage/bundle/rows.ts';
import { compactInstant, parseInstant } from '../storage/time.ts';
import { isArchive } from '../tools/archive.ts';
import { exportLedger } from '../tools/export-ledger.ts';
import { runOperation } from '../tools/operation.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { exportArchive, readBack, tarEntries } from './helpers/bundle.ts';

const KA = 'key-alpha',
  KB = 'key-beta',
  KC = 'key-gamma';
let t: TestApp;
let now = '';
let beforeAll_ = '';

const write = async (body: unknown, key = KA): Promise<any> => {
  const r = await t.call('POST', '/v1/memories', { body, key });
  expect(r.status).toBe(200);
  expect(r.json.refused).toEqual([]);
  return r.json;
};

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: `${KA}=alpha,${KB}=beta,${KC}=gamma` });
  beforeAll_ = (await t.call('GET', '/v1/memories', { key: KA, query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of;
  await write({
    space: 'w',
    backfill: { declared_captured_at: '2023-05-01T12:00:00Z', reason: 'crm import' },
    nodes: [{ id: 'bf1', kind: 'entity', statement: 'Acme', category: 'org', asserted_at: '2023-04-01T00:00:00Z' }],
  });
  await write({
    space: 'w',
    nodes: [
      { id: 'n1', kind: 'claim', statement: 'rain', category: 'econ', payload: { source: 'wire' } },
      {
        id: 'n2',
        kind: 'claim',
        statement: 'rate 4.5',
        category: 'econ',
        fact_key: 'rate',
        fact_value: 4.5,
        asserted_at: '2024-01-01T00:00:00Z',
      },
      {
        id: 'n3',
        kind: 'claim',
        statement: 'rate 4.75',
        category: 'rates',
        fact_key: 'rate',
        fact_value: 4.75,
        asserted_at: '2024-06-01T00:00:00Z',
      },
      { id: 'v', kind: 'factor', statement: 'v1', asserted_at: '2024-01-01T00:00:00Z', valid_to: '2024-02-01T00:00:00Z' },
      { id: 'v', kind: 'factor', statement: 'v2', asserted_at: '2024-02-01T00:00:00Z' },
    ],
    edges: [
      { source_id: 'n1', target_id: 'n2', edge_type: 'CAUSES', lag: '36 hours', confidence: 0.7, mechanism: 'supply' },
      { source_id: 'n3', target_id: 'n2', edge_type: 'SUPERSEDES' },
      { source_id: 'bf1', target_id: 'n1', edge_type: 'MENTIONS' },
    ],
  });
  await write({
    space: 'x',
    nodes: [{ id: 'x1', kind: 'claim', statement: 'elsewhere', category: 'econ' }],
    edges: [{ source_id: 'x1', target_id: 'n1', edge_type: 'SUPPORTS' }],
  });
  expect((await t.call('POST', '/v1/facts', { key: KA, body: { fact_key: 'rate' } })).status).toBe(200);
  now = (await t.call('GET', '/v1/memories', { key: KA, query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of;
  const resolved = await t.call('POST', '/v1/resolve', { key: KA, body: { fact: 'rate', as_of: now } });
  expect(resolved.json.value).toBe(4.75);
  now = (await t.call('GET', '/v1/memories', { key: KA, query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of;
  await write({ space: 'b', nodes: [{ id: 'beta-only', kind: 'claim', statement: 'secret' }] }, KB);
});

afterAll(async () => t?.close());

const NODE_FIELDS = [
  'id',
  'kind',
  'space',
  'statement',
  'category',
  'payload',
  'asserted_at',
  'valid_from',
  'valid_to',
  'known_at',
  'attestation',
  'fact_key',
  'fact_value',
];
const EDGE_FIELDS = [
  'source_id',
  'target_id',
  'edge_type',
  'confidence',
  'lag',
  'mechanism',
  'space',
  'asserted_at',
  'valid_from',
  'valid_to',
  'known_at',
  'attestation',
];
const VERDICT_FIELDS = ['target_id', 'value', 'outcome', 'method', 'ruleset', 'resolver', 'decided_at', 'known_at', 'attestation'];
const ids = (rows: { id?: unknown }[]): string[] => rows.map((r) => String(r.id)).sort();

describe('GET /v1/export', () => {
  it('is a gzip attachment named ledger-<tenant>-<as_of>.tar.gz holding one directory of that stem with the five files', async () => {
    const r = await exportArchive(t, { as_of: now }, KA);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/gzip');
    const stem = `ledger-alpha-${compactInstant(parseInstant(now))}`;
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${stem}.tar.gz"`);
    const entries = await tarEntries(r.buf);
    const files = [...entries.keys()].filter((k) => entries.get(k) !== null).sort();
    expect(files).toEqual(
      ['edges.jsonl', 'invalidations.jsonl', 'manifest.json', 'nodes.jsonl', 'resolutions.jsonl'].map((f) => `${stem}/${f}`),
    );
    expect([...entries.keys()].every((k) => k.startsWith(`${stem}/`))).toBe(true);
  });

  it('manifest: bundle_version, namespace, source, exported_as_of, facts in force, referenced batches, embedding null', async () => {
    const { manifest } = await readBack((await exportArchive(t, { as_of: now }, KA)).buf);
    expect(manifest.bundle_version).toBe(BUNDLE_VERSION);
    expect(BUNDLE_FORMAT_VERSION).toBe(BUNDLE_VERSION);
    expect(manifest.namespace).toEqual({ tenant: 'alpha' });
    expect(manifest.source).toBe(`svc/${SERVICE_VERSION}`);
    expect(manifest.exported_as_of).toBe(now);
    expect(manifest.declarations.embedding).toBeNull();
    expect(manifest.declarations.facts.map((f: any) => f.fact_key)).toEqual(['rate']);
    expect(manifest.declarations.facts[0]).toMatchObject({ policy: 'latest_valid', key_fields: [] });
    expect(manifest.declarations.batches).toHaveLength(1);
    expect(manifest.declarations.batches[0]).toMatchObject({ declared_captured_at: '2023-05-01T12:00:00.000000Z', reason: 'crm import' });
  });

  it('rows carry every field, known_at and attestation; lag is an ISO 8601 duration; verdicts are exported', async () => {
    const b = await readBack((await exportArchive(t, { as_of: now }, KA)).buf);
    expect(ids(b.nodes)).toEqual(['bf1', 'n1', 'n2', 'n3', 'v', 'v', 'x1']);
    for (const n of b.nodes) expect(Object.keys(n).sort()).toEqual([...NODE_FIELDS].sort());
    for (const e of b.edges) expect(Object.keys(e).sort()).toEqual([...EDGE_FIELDS].sort());
    for (const v of b.resolutions) for (const f of VERDICT_FIELDS) expect(v).toHaveProperty(f);
    const bf1 = b.nodes.find((n) => n.id === 'bf1');
    expect(bf1?.known_at).toBe('2023-05-01T12:00:00.000000Z');
    expect(bf1?.attestation.batch).toMatchObject({ declared_captured_at: '2023-05-01T12:00:00.000000Z', reason: 'crm import' });
    expect(parseInstant(bf1?.attestation.captured_at)).toBeGreaterThan(parseInstant(bf1?.known_at));
    const n1 = b.nodes.find((n) => n.id === 'n1');
    expect(n1?.attestation).toEqual({ captured_at: n1?.known_at, batch: null });
    expect(n1?.payload).toEqual({ source: 'wire' });
    expect(b.nodes.find((n) => n.id === 'n3')?.fact_value).toBe(4.75);
    const v1 = b.nodes.find((n) => n.statement === 'v1');
    expect(v1?.valid_to).toBe('2024-02-01T00:00:00.000000Z');
    const causes = b.edges.find((e) => e.edge_type === 'CAUSES');
    expect(causes).toMatchObject({ source_id: 'n1', target_id: 'n2', lag: 'P1DT12H', confidence: 0.7, mechanism: 'supply', space: 'w' });
    expect(b.resolutions).toHaveLength(1);
    expect(b.resolutions[0]).toMatchObject({ target_id: 'n3', value: 4.75, attestation: { batch: null } });
    expect(b.resolutions[0]?.known_at).toBe(b.resolutions[0]?.decided_at);
  });

  it('nothing learned after as_of appears; validity is not filtered', async () => {
    const past = await readBack((await exportArchive(t, { as_of: '2023-06-01' }, KA)).buf);
    expect(ids(past.nodes)).toEqual(['bf1']);
    expect(past.edges).toEqual([]);
    expect(past.resolutions).toEqual([]);
    expect(past.manifest.declarations.facts).toEqual([]);
    expect(past.manifest.exported_as_of).toBe('2023-06-01T23:59:59.999999Z');
    const mid = await readBack((await exportArchive(t, { as_of: beforeAll_ }, KA)).buf);
    // Written after that instant, but declared as known before it: a past export holds it.
    expect(ids(mid.nodes)).toEqual(['bf1']);
    expect(mid.manifest.declarations.batches).toHaveLength(1);
    const all = await readBack((await exportArchive(t, { as_of: now }, KA)).buf);
    expect(
      all.nodes
        .filter((n) => n.id === 'v')
        .map((n) => n.statement)
        .sort(),
    ).toEqual(['v1', 'v2']);
  });

  it('a past cut carries an edge known by then although one of its ends was learned later, as reads then count it', async () => {
    // b is learned now; c and "b SUPERSEDES c" are backfilled to 2024: a read in June 2024 shows c superseded by b.
    await write({ space: 's', nodes: [{ id: 'b', kind: 'claim', statement: 'new' }] }, KC);
    await write(
      {
        space: 's',
        backfill: { declared_captured_at: '2024-01-01T00:00:00Z', reason: 'archive' },
        nodes: [{ id: 'c', kind: 'claim', statement: 'old' }],
        edges: [{ source_id: 'b', target_id: 'c', edge_type: 'SUPERSEDES' }],
      },
      KC,
    );
    const read = await t.call('GET', '/v1/memories', { key: KC, query: { as_of: '2024-06-01' } });
    expect(read.json.items.map((i: any) => [i.id, i.superseded_by])).toEqual([['c', ['b']]]);
    const cut = await readBack((await exportArchive(t, { as_of: '2024-06-01' }, KC)).buf);
    expect(ids(cut.nodes)).toEqual(['c']);
    expect(cut.edges).toMatchObject([{ source_id: 'b', target_id: 'c', edge_type: 'SUPERSEDES', known_at: '2024-01-01T00:00:00.000000Z' }]);
    // Scoped to a space, the edges between its exported nodes only (SPEC.md): b is not one of them then.
    expect((await readBack((await exportArchive(t, { as_of: '2024-06-01', space: 's' }, KC)).buf)).edges).toEqual([]);
  });

  it('space scoping keeps its nodes, the edges between them and the resolutions on them', async () => {
    const r = await exportArchive(t, { as_of: now, space: 'w' }, KA);
    expect(r.headers.get('content-disposition')).toContain(`ledger-alpha-w-${compactInstant(parseInstant(now))}.tar.gz`);
    const w = await readBack(r.buf);
    expect(w.manifest.namespace).toEqual({ tenant: 'alpha', space: 'w' });
    expect(ids(w.nodes)).toEqual(['bf1', 'n1', 'n2', 'n3', 'v', 'v']);
    expect(w.edges.map((e) => e.edge_type).sort()).toEqual(['CAUSES', 'MENTIONS', 'SUPERSEDES']);
    expect(w.resolutions).toHaveLength(1);
    const x = await readBack((await exportArchive(t, { as_of: now, space: 'x' }, KA)).buf);
    expect(ids(x.nodes)).toEqual(['x1']);
    expect(x.edges).toEqual([]);
    expect(x.resolutions).toEqual([]);
  });

  it('category scoping works the same way and combines with space', async () => {
    const econ = await readBack((await exportArchive(t, { as_of: now, category: 'econ' }, KA)).buf);
    expect(ids(econ.nodes)).toEqual(['n1', 'n2', 'x1']);
    expect(econ.edges.map((e) => `${e.source_id}>${e.target_id}`).sort()).toEqual(['n1>n2', 'x1>n1']);
    expect(econ.resolutions).toEqual([]);
    expect(econ.manifest.category).toBe('econ');
    const both = await readBack((await exportArchive(t, { as_of: now, category: 'econ', space: 'w' }, KA)).buf);
    expect(ids(both.nodes)).toEqual(['n1', 'n2']);
    expect(both.edges).toHaveLength(1);
    const rates = await readBack((await exportArchive(t, { as_of: now, category: 'rates' }, KA)).buf);
    expect(ids(rates.nodes)).toEqual(['n3']);
    expect(rates.resolutions.map((v) => v.target_id)).toEqual(['n3']);
  });

  it("cuts an as_of in the future at the server's present instant", async () => {
    const r = await exportArchive(t, { as_of: '2100-01-01' }, KA);
    const b = await readBack(r.buf);
    const exportedAt = parseInstant(b.manifest.exported_as_of);
    expect(exportedAt).toBeGreaterThanOrEqual(parseInstant(now));
    expect(exportedAt).toBeLessThan(parseInstant('2100-01-01T00:00:00Z'));
    expect(b.stem).toBe(`ledger-alpha-${compactInstant(exportedAt)}`);
    expect(ids(b.nodes)).toEqual(['bf1', 'n1', 'n2', 'n3', 'v', 'v', 'x1']);
  });

  it('at an app-scoped address the export holds the confined space only', async () => {
    const archive = await runOperation(
      exportLedger,
      { as_of: now, space: 'x' },
      { ledger: t.ledger, tenant: 'alpha', confinedSpace: 'w', services: { version: SERVICE_VERSION } },
    );
    if (!isArchive(archive)) throw new Error('not an archive');
    const chunks: Buffer[] = [];
    for await (const c of archive.open()) chunks.push(c as Buffer);
    await archive.dispose();
    const b = await readBack(Buffer.concat(chunks));
    expect(b.manifest.namespace).toEqual({ tenant: 'alpha', space: 'w' });
    expect(ids(b.nodes)).toEqual(['bf1', 'n1', 'n2', 'n3', 'v', 'v']);
  });

  it('never exports another tenant', async () => {
    const beta = await readBack((await exportArchive(t, { as_of: now }, KB)).buf);
    expect(beta.manifest.namespace).toEqual({ tenant: 'beta' });
    expect(beta.nodes).toEqual([]);
    const later = (await t.call('GET', '/v1/memories', { key: KB, query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of;
    const beta2 = await readBack((await exportArchive(t, { as_of: later }, KB)).buf);
    expect(ids(beta2.nodes)).toEqual(['beta-only']);
    const alpha = await readBack((await exportArchive(t, { as_of: later }, KA)).buf);
    expect(ids(alpha.nodes)).not.toContain('beta-only');
  });

  it('refuses a missing or malformed as_of and a bad filter with a 4xx naming the field', async () => {
    const none = await t.call('GET', '/v1/export', { key: KA });
    expect(none.status).toBe(400);
    expect(none.json.detail.error).toBe('SVC_AS_OF_REQUIRED');
    const bad = await t.call('GET', '/v1/export', { key: KA, query: { as_of: '2024-03-01T00:00:00' } });
    expect(bad.status).toBe(400);
    expect(bad.json.detail.error).toBe('SVC_BAD_TIMESTAMP');
    const emptyCat = await t.call('GET', '/v1/export', { key: KA, query: { as_of: now, category: '' } });
    expect(emptyCat.status).toBe(422);
    expect(JSON.stringify(emptyCat.json.detail)).toContain('category');
    expect((await t.call('GET', '/v1/export', { query: { as_of: now } })).status).toBe(401);
  });
});

describe('export_ledger and the staged files', () => {
  it('the tool returns an Archive; the REST door and dispose() leave no staged folder behind', async () => {
    const privateTmp = mkdtempSync(join(tmpdir(), 'ledger-test-staging-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    try {
      const archive = await runOperation(
        exportLedger,
        { as_of: now, space: 'w' },
        { ledger: t.ledger, tenant: 'alpha', services: { version: SERVICE_VERSION } },
      );
      expect(isArchive(archive)).toBe(true);
      if (!isArchive(archive)) return;
      expect(archive.mediaType).toBe('application/gzip');
      expect(readdirSync(privateTmp).filter((f) => f.startsWith('ledger-export-'))).toHaveLength(1);
      const chunks: Buffer[] = [];
      for await (const c of archive.open()) chunks.push(c as Buffer);
      const b = await readBack(Buffer.concat(chunks));
      expect(`${b.stem}.tar.gz`).toBe(archive.filename);
      expect(ids(b.nodes)).toEqual(['bf1', 'n1', 'n2', 'n3', 'v', 'v']);
      await archive.dispose();
      expect(readdirSync(privateTmp).filter((f) => f.startsWith('ledger-export-'))).toEqual([]);
      const r = await exportArchive(t, { as_of: now }, KA);
      expect(r.status).toBe(200);
      await new Promise((res) => setTimeout(res, 50));
      expect(readdirSync(privateTmp).filter((f) => f.startsWith('ledger-export-'))).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(privateTmp, { recursive: true, force: true });
    }
  });
});
