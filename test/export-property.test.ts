// Property: for random ledgers (spaces, categories, reused ids with adjacent or overlapping validity,
// backfilled batches, edges of every family, resolved facts) and random as_of / valid_at, a bundle exported
// by the server answers list, get and why exactly as the server does (items, versions, edges, chains,
// reasons and certificates with their masked counts; tx_as_of aside). Each run writes into its own tenant.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackStream } from '../storage/bundle/archive-files.ts';
import { bundleGet, bundleList, bundleWhy } from '../storage/bundle/queries.ts';
import { loadBundleFolder, type LoadedBundle } from '../storage/bundle/reader.ts';
import { formatInstant, parseInstant } from '../storage/time.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { exportArchive } from './helpers/bundle.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? '14');
// Shrinking replays runs, each in a fresh tenant: keys to spare.
const KEYS = Array.from({ length: RUNS * 40 }, (_, i) => `k${i}`);
const DAY = 86_400_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const day = (k: number): string => formatInstant(T0 + k * DAY);
const IDS = ['a', 'b', 'c', 'd', 'e'];
const TYPES = ['CAUSES', 'TRIGGERS', 'SUPPORTS', 'CONTRADICTS', 'SUPERSEDES', 'RESTATES', 'CONCURRENT_SIGNAL', 'MENTIONS', 'DERIVED_FROM'];

let t: TestApp;
let keyIndex = 0;
const dirs: string[] = [];

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: KEYS.map((k) => `${k}=tenant-${k}`).join(',') });
});
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await t?.close();
});

const nodeArb = fc.record({
  id: fc.constantFrom(...IDS),
  kind: fc.constantFrom('claim', 'entity'),
  statement: fc.constantFrom('up', 'down', 'flat'),
  category: fc.constantFrom(null, 'x', 'y'),
  asserted: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
  span: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  fact: fc.boolean(),
  value: fc.integer({ min: 1, max: 3 }),
});

const edgeArb = fc.record({
  s: fc.constantFrom(...IDS),
  t: fc.constantFrom(...IDS),
  type: fc.constantFrom(...TYPES),
  asserted: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
});

const writeArb = fc
  .record({
    space: fc.constantFrom('s1', 's2'),
    backfill: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
    nodes: fc.array(nodeArb, { maxLength: 4 }),
    edges: fc.array(edgeArb, { maxLength: 3 }),
  })
  .filter((w) => w.nodes.length + w.edges.length > 0); // an empty write is a 422 (strict input, v1.x)

const queryArb = fc.record({
  asOfPick: fc.nat(),
  validAt: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
  filter: fc.constantFrom<Record<string, string>>({}, { space: 's1' }, { space: 's2' }, { category: 'x' }, { kind: 'entity' }),
  depth: fc.integer({ min: 1, max: 3 }),
});

type GenWrite = typeof writeArb extends fc.Arbitrary<infer V> ? V : never;

function freshKey(): string {
  const key = KEYS[keyIndex++];
  if (key === undefined) throw new Error('out of tenants: raise KEYS');
  return key;
}

function body(w: GenWrite): unknown {
  return {
    space: w.space,
    backfill:
      w.backfill === undefined
        ? undefined
        : { declared_captured_at: formatInstant(T0 - (w.backfill * DAY) / 4), reason: `import ${w.backfill}` },
    nodes: w.nodes.map((n) => {
      const asserted = n.asserted === undefined ? undefined : day(n.asserted);
      return {
        id: n.id,
        kind: n.kind,
        statement: n.statement,
        category: n.category,
        asserted_at: asserted,
        valid_to: asserted !== undefined && n.span !== undefined ? day((n.asserted ?? 0) + n.span) : undefined,
        ...(n.fact ? { fact_key: 'f', fact_value: n.value } : {}),
      };
    }),
    edges: w.edges.map((e) => ({
      source_id: e.s,
      target_id: e.t,
      edge_type: e.type,
      asserted_at: e.asserted === undefined ? undefined : day(e.asserted),
    })),
  };
}

async function loadExport(key: string, asOf: string): Promise<LoadedBundle> {
  const r = await exportArchive(t, { as_of: asOf }, key);
  expect(r.status).toBe(200);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-test-prop-'));
  dirs.push(dir);
  await unpackStream(Readable.from([r.buf]), dir, 1);
  return loadBundleFolder(dir);
}

const noTx = (x: any): any => {
  const copy = structuredClone(x);
  delete copy.certificate.tx_as_of;
  return copy;
};

/** Instants where answers change: every row's knowledge instant, just before it, and far in the past. */
function candidates(b: LoadedBundle): string[] {
  const set = new Set<number>([T0 - 1000 * DAY]);
  for (const r of [...b.view.nodesIn(), ...b.view.edgesOfSpace(), ...b.view.verdicts()]) set.add(r.known_at).add(r.known_at - 1);
  return [...set].sort((x, y) => x - y).map(formatInstant);
}

describe('a bundle answers as the server', () => {
  it("list, get and why over a bundle exported now equal the server's answers at any as_of", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(writeArb, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        fc.array(queryArb, { minLength: 1, maxLength: 3 }),
        async (writes, resolve, queries) => {
          const key = freshKey();
          for (const w of writes) expect((await t.call('POST', '/v1/memories', { key, body: body(w) })).status).toBe(200);
          const now0 = (await t.call('GET', '/v1/memories', { key, query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of as string;
          if (resolve) {
            await t.call('POST', '/v1/facts', { key, body: { fact_key: 'f' } });
            await t.call('POST', '/v1/resolve', { key, body: { fact: 'f', as_of: now0 } });
          }
          const now = (await t.call('GET', '/v1/memories', { key, query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of as string;
          const b = await loadExport(key, now);
          const picks = candidates(b);
          for (const q of queries) {
            const asOf = picks[q.asOfPick % picks.length] ?? now;
            const validAt = q.validAt === undefined ? undefined : day(q.validAt);
            const base = { as_of: asOf, ...(validAt ? { valid_at: validAt } : {}) };
            const server = await t.call('GET', '/v1/memories', { key, query: { ...base, ...q.filter, limit: 1000 } });
            const offline = bundleList(b, {
              asOf: parseInstant(asOf),
              validAt: validAt === undefined ? undefined : parseInstant(validAt),
              ...q.filter,
              limit: 1000,
            });
            expect(noTx(offline)).toEqual(noTx(server.json));
            const space = q.filter.space;
            for (const id of IDS) {
              const query = { ...base, ...(space ? { space } : {}) };
              const rq = { asOf: parseInstant(asOf), validAt: validAt === undefined ? undefined : parseInstant(validAt), space };
              const sg = await t.call('GET', `/v1/memories/${id}`, { key, query });
              expect(noTx(bundleGet(b, id, rq))).toEqual(noTx(sg.json));
              const sw = await t.call('GET', `/v1/memories/${id}/why`, { key, query: { ...query, depth: q.depth } });
              expect(noTx(bundleWhy(b, id, { ...rq, depth: q.depth }))).toEqual(noTx(sw.json));
            }
          }
        },
      ),
      { numRuns: RUNS },
    );
    // 10-19 s in CI, 33 s alone on a machine at load 10: the project's 60 s default was outrun at load 18.
  }, 180_000);

  it('a bundle exported at an earlier as_of lists and gets the same blocks as the server at or before it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(writeArb, { minLength: 1, maxLength: 4 }), fc.nat(), fc.nat(), async (writes, cutPick, readPick) => {
        const key = freshKey();
        for (const w of writes) await t.call('POST', '/v1/memories', { key, body: body(w) });
        const now = (await t.call('GET', '/v1/memories', { key, query: { as_of: '2100-01-01' } })).json.certificate.tx_as_of as string;
        const picks = candidates(await loadExport(key, now));
        const cut = picks[cutPick % picks.length] ?? now;
        const b = await loadExport(key, cut);
        expect(b.manifest.exported_as_of).toBe(formatInstant(parseInstant(cut)));
        const earlier = picks.filter((p) => parseInstant(p) <= parseInstant(cut));
        const asOf = earlier[readPick % earlier.length] ?? cut;
        const server = await t.call('GET', '/v1/memories', { key, query: { as_of: asOf, limit: 1000 } });
        expect(bundleList(b, { asOf: parseInstant(asOf), limit: 1000 }).items).toEqual(server.json.items);
        for (const id of IDS) {
          const sg = (await t.call('GET', `/v1/memories/${id}`, { key, query: { as_of: asOf } })).json;
          const og = bundleGet(b, id, { asOf: parseInstant(asOf) });
          // Not the reason: a bundle cut at an instant cannot know a block learned later (absent, not not_yet).
          expect([og.item, og.versions]).toEqual([sg.item, sg.versions]);
        }
      }),
      { numRuns: Math.max(4, Math.floor(RUNS / 2)) },
    );
  });
});
