// The ledger core at scale: 100k nodes and 100k edges (times --scale) imported over HTTP in 1,000-row
// requests against a real server process, then as-of list and get latencies, small sequential writes
// (one node and one edge each), server memory and the reload time of the store; beside it the same rows
// inserted into bare Kuzu in this process (UNWIND and COPY in 1,000-row batches, and single prepared
// CREATEs in autocommit and in a transaction), so each ratio is measured in one run on one load.
//
// This bench imports `kuzu` directly for the baseline: product code reaches the engine only through
// storage/log/kuzu/kuzu-graph.ts, but the baseline must measure the engine without the ledger around it.
import kuzu, { type KuzuValue, type PreparedStatement } from 'kuzu';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rssMb, untilQuiet } from '../lib/proc.ts';
import { spawnServer, type ServerProcess } from '../lib/spawn-server.ts';
import { fmt, median, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';
import { rng } from '../lib/rng.ts';
import { CSV_OPTIONS } from '../../storage/log/kuzu/tables.ts';

const BATCH = 1000;
const CLIENTS = 4;
const KINDS = ['claim', 'entity', 'prediction', 'factor'];
const TYPES = ['CAUSES', 'SUPPORTS', 'DERIVED_FROM', 'MENTIONS', 'SUPERSEDES'];
const T0 = Date.UTC(2023, 0, 1) * 1000;

interface NodeSpec {
  id: string;
  kind: string;
  space: string;
  category: string;
  statement: string;
  payload: Record<string, unknown>;
  asserted_at: string;
}
interface EdgeSpec {
  source_id: string;
  target_id: string;
  edge_type: string;
  confidence: number;
  asserted_at: string;
  mechanism: string;
}

const iso = (us: number): string =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, '0')}Z`;

function makeNodes(n: number, rand: () => number): NodeSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `n${i}`,
    kind: KINDS[i % KINDS.length] ?? 'claim',
    space: `user:${i % 10}`,
    category: `topic-${i % 20}`,
    statement: `Statement ${i}: the measured value of series ${Math.floor(rand() * 1000)} moved by ${(rand() * 10).toFixed(2)} points.`,
    payload: { source: `feed-${i % 7}`, n: i },
    asserted_at: iso(T0 + i * 1_000_000),
  }));
}

function makeEdges(n: number, nodes: number, rand: () => number): EdgeSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    source_id: `n${Math.floor(rand() * nodes)}`,
    target_id: `n${Math.floor(rand() * nodes)}`,
    edge_type: TYPES[i % TYPES.length] ?? 'CAUSES',
    confidence: Math.round(rand() * 100) / 100,
    asserted_at: iso(T0 + i * 1_000_000 + 1),
    mechanism: `link ${i}`,
  }));
}

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += BATCH) out.push(rows.slice(i, i + BATCH));
  return out;
}

async function post(base: string, body: string): Promise<void> {
  const r = await fetch(`${base}/v1/memories`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const json = (await r.json()) as { accepted?: number; refused?: unknown[] };
  if (r.status !== 200 || (json.refused?.length ?? 0) > 0)
    throw new Error(`import failed (${r.status}): ${JSON.stringify(json).slice(0, 300)}`);
}

/** Sends the bodies with `clients` concurrent senders; rows per second over the wall time. */
async function importBodies(base: string, label: string, bodies: { body: string; rows: number }[], clients: number): Promise<number> {
  let next = 0,
    done = 0,
    rows = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < bodies.length) {
        const b = bodies[next++];
        if (!b) break;
        await post(base, b.body);
        rows += b.rows;
        progress(label, ++done, bodies.length);
      }
    }),
  );
  return rows / ((performance.now() - t0) / 1000);
}

async function getJson(url: string): Promise<unknown> {
  const r = await fetch(url);
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

/**
 * The same rows through `UNWIND $rows ... CREATE` in 1,000-row autocommit batches, with the columns the
 * ledger stores (tenant, validity, capture and knowledge instants, batch, content hash), so the ratio
 * compares write paths, not schemas. Edges go into a node table, as the ledger keeps them: `UNWIND ...
 * MATCH ... CREATE` into a relationship table ran at under 600 rows/s here, which would flatter the ratio.
 */
interface BareKuzu {
  /** UNWIND ... CREATE, rows/s. */
  unwind: number;
  /** COPY FROM a CSV file written per 1,000-row batch, rows/s (the file write included). */
  copy: number;
  /** One prepared CREATE of a node in autocommit, ms per statement. */
  createAuto: number[];
  /** BEGIN, a prepared CREATE of a node and of an edge, COMMIT: ms per transaction. */
  createTx: number[];
}

async function bareKuzu(nodes: NodeSpec[], edges: EdgeSpec[], smallWrites: number): Promise<BareKuzu> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bare-kuzu-'));
  const db = new kuzu.Database(join(dir, 'db'));
  const conn = new kuzu.Connection(db);
  const OPEN = Number.MAX_SAFE_INTEGER;
  const nodeCols =
    'seq INT64, tenant STRING, id STRING, space STRING, kind STRING, statement STRING, category STRING, payload STRING, asserted_at INT64, valid_from INT64, valid_to INT64, captured_at INT64, known_at INT64, batch_id STRING, fact_key STRING, fact_value STRING, hash STRING';
  const edgeCols =
    'seq INT64, tenant STRING, source_id STRING, target_id STRING, edge_type STRING, confidence DOUBLE, lag STRING, mechanism STRING, space STRING, asserted_at INT64, valid_from INT64, valid_to INT64, captured_at INT64, known_at INT64, batch_id STRING, hash STRING';
  // Columns the rows leave empty are left out (Kuzu cannot bind a list whose values are all null); they stay NULL.
  const empty = ['batch_id', 'fact_key', 'fact_value', 'lag'];
  const create = (table: string, cols: string): string =>
    `UNWIND $rows AS r CREATE (:${table} {${cols
      .split(', ')
      .map((c) => c.split(' ')[0] ?? '')
      .filter((c) => !empty.includes(c))
      .map((c) => `${c}: r.${c}`)
      .join(', ')}})`;
  const hash = 'ab'.repeat(32);
  try {
    for (const t of ['', 'C', 'P']) {
      for (const ddl of [
        `CREATE NODE TABLE N${t}(${nodeCols}, PRIMARY KEY(seq))`,
        `CREATE NODE TABLE E${t}(${edgeCols}, PRIMARY KEY(seq))`,
      ]) {
        const r = await conn.query(ddl);
        for (const x of Array.isArray(r) ? r : [r]) x.close();
      }
    }
    const insNodes = await conn.prepare(create('N', nodeCols));
    const insEdges = await conn.prepare(create('E', edgeCols));
    // Every result is closed: one left to the garbage collector after the database closes crashes the process.
    const exec = async (stmt: PreparedStatement, rows: Record<string, KuzuValue>[]): Promise<void> => {
      const r = await conn.execute(stmt, { rows });
      for (const x of Array.isArray(r) ? r : [r]) x.close();
    };
    let seq = 0;
    const t0 = performance.now();
    for (const c of chunks(nodes)) {
      await exec(
        insNodes,
        c.map((n) => {
          const at = Date.parse(n.asserted_at) * 1000;
          return {
            seq: ++seq,
            tenant: 'local',
            id: n.id,
            space: n.space,
            kind: n.kind,
            statement: n.statement,
            category: n.category,
            payload: JSON.stringify(n.payload),
            asserted_at: at,
            valid_from: at,
            valid_to: OPEN,
            captured_at: at,
            known_at: at,
            hash,
          };
        }),
      );
    }
    for (const c of chunks(edges)) {
      await exec(
        insEdges,
        c.map((e) => {
          const at = Date.parse(e.asserted_at) * 1000;
          return {
            seq: ++seq,
            tenant: 'local',
            source_id: e.source_id,
            target_id: e.target_id,
            edge_type: e.edge_type,
            confidence: e.confidence,
            mechanism: e.mechanism,
            space: 'user:0',
            asserted_at: at,
            valid_from: at,
            valid_to: OPEN,
            captured_at: at,
            known_at: at,
            hash,
          };
        }),
      );
    }
    const unwind = (nodes.length + edges.length) / ((performance.now() - t0) / 1000);

    // COPY as the ledger stages it: text JSON-encoded, then CSV-quoted; one file and one statement per batch.
    const cell = (v: string | number | null): string =>
      v === null ? '' : typeof v === 'number' ? String(v) : `"${JSON.stringify(v).replace(/"/g, '""')}"`;
    const copyFile = join(dir, 'batch.csv');
    const copyRows = async (table: string, lines: string[]): Promise<void> => {
      writeFileSync(copyFile, lines.join('\n') + '\n');
      const r = await conn.query(`COPY ${table} FROM '${copyFile}' (${CSV_OPTIONS})`);
      for (const x of Array.isArray(r) ? r : [r]) x.close();
    };
    const t1 = performance.now();
    for (const c of chunks(nodes)) {
      await copyRows(
        'NC',
        c.map((n) => {
          const at = Date.parse(n.asserted_at) * 1000;
          return [
            ++seq,
            'local',
            n.id,
            n.space,
            n.kind,
            n.statement,
            n.category,
            JSON.stringify(n.payload),
            at,
            at,
            OPEN,
            at,
            at,
            null,
            null,
            null,
            hash,
          ]
            .map(cell)
            .join(',');
        }),
      );
    }
    for (const c of chunks(edges)) {
      await copyRows(
        'EC',
        c.map((e) => {
          const at = Date.parse(e.asserted_at) * 1000;
          return [
            ++seq,
            'local',
            e.source_id,
            e.target_id,
            e.edge_type,
            e.confidence,
            null,
            e.mechanism,
            'user:0',
            at,
            at,
            OPEN,
            at,
            at,
            null,
            hash,
          ]
            .map(cell)
            .join(',');
        }),
      );
    }
    const copy = (nodes.length + edges.length) / ((performance.now() - t1) / 1000);

    // Single prepared CREATEs, the engine's floor for one small write.
    const names = (cols: string): string[] => cols.split(', ').map((c) => c.split(' ')[0] ?? '');
    const one = (table: string, cols: string): string =>
      `CREATE (:${table} {${names(cols)
        .map((c) => `${c}: $${c}`)
        .join(', ')}})`;
    const insNode = await conn.prepare(one('NP', nodeCols));
    const insEdge = await conn.prepare(one('EP', edgeCols));
    const run = async (q: string): Promise<void> => {
      const r = await conn.query(q);
      for (const x of Array.isArray(r) ? r : [r]) x.close();
    };
    const bind = async (stmt: PreparedStatement, params: Record<string, KuzuValue>): Promise<void> => {
      const r = await conn.execute(stmt, params);
      for (const x of Array.isArray(r) ? r : [r]) x.close();
    };
    const nodeParams = (i: number): Record<string, KuzuValue> => {
      const at = T0 + i;
      return {
        seq: ++seq,
        tenant: '"local"',
        id: `"w${i}"`,
        space: '"user:0"',
        kind: '"claim"',
        statement: `"small write ${i}"`,
        category: '"topic-1"',
        payload: '"{}"',
        asserted_at: at,
        valid_from: at,
        valid_to: OPEN,
        captured_at: at,
        known_at: at,
        batch_id: null,
        fact_key: null,
        fact_value: null,
        hash: `"${hash}"`,
      };
    };
    const edgeParams = (i: number): Record<string, KuzuValue> => {
      const at = T0 + i;
      return {
        seq: ++seq,
        tenant: '"local"',
        source_id: `"w${i}"`,
        target_id: '"n0"',
        edge_type: '"MENTIONS"',
        confidence: 0.5,
        lag: null,
        mechanism: null,
        space: '"user:0"',
        asserted_at: at,
        valid_from: at,
        valid_to: OPEN,
        captured_at: at,
        known_at: at,
        batch_id: null,
        hash: `"${hash}"`,
      };
    };
    const createAuto: number[] = [],
      createTx: number[] = [];
    for (let i = 0; i < smallWrites; i++) {
      let t = performance.now();
      await bind(insNode, nodeParams(i));
      createAuto.push(performance.now() - t);
      t = performance.now();
      await run('BEGIN TRANSACTION');
      await bind(insNode, nodeParams(smallWrites + i));
      await bind(insEdge, edgeParams(smallWrites + i));
      await run('COMMIT');
      createTx.push(performance.now() - t);
    }
    return { unwind, copy, createAuto, createTx };
  } finally {
    await conn.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function searchCaughtUp(base: string): Promise<number> {
  const t0 = performance.now();
  // A search answers only once every committed row is indexed, so its latency here is the catch-up.
  const r = await fetch(`${base}/v1/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'measured value', as_of: new Date(Date.now() + 1000).toISOString(), limit: 1 }),
  });
  await r.text();
  return r.status === 200 ? (performance.now() - t0) / 1000 : Number.NaN;
}

async function waitUp(base: string): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(`${base}/v1/version`)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const core: BenchSection = {
  name: 'core',
  async run({ scale }) {
    // At least 20k nodes, so even a quick run times the 1-client import over ~15 requests, not 3.
    const n = Math.max(20 * BATCH, Math.round(100_000 * scale));
    const smallWrites = Math.max(100, Math.round(500 * Math.min(1, scale * 10)));
    const rand = rng(42);
    const nodes = makeNodes(n, rand);
    const edges = makeEdges(n, n, rand);
    const half = Math.floor(n / 2 / BATCH) * BATCH;
    const bodiesOf = (rows: { nodes?: unknown[]; edges?: unknown[] }[], space: (i: number) => string) =>
      rows.map((r, i) => ({ body: JSON.stringify({ space: space(i), ...r }), rows: (r.nodes?.length ?? 0) + (r.edges?.length ?? 0) }));
    // The first half (nodes, then edges among them) by one client, the second half by four concurrent ones.
    const seqBodies = [
      ...bodiesOf(
        chunks(nodes.slice(0, half)).map((c) => ({ nodes: c.map(({ space: _s, ...x }) => x) })),
        (i) => `user:${i % 10}`,
      ),
    ];
    const firstEdges = edges.filter((e) => Number(e.source_id.slice(1)) < half && Number(e.target_id.slice(1)) < half);
    const first = new Set(firstEdges);
    const laterEdges = edges.filter((e) => !first.has(e));
    seqBodies.push(
      ...bodiesOf(
        chunks(firstEdges).map((c) => ({ edges: c })),
        (i) => `user:${i % 10}`,
      ),
    );
    const concNodeBodies = bodiesOf(
      chunks(nodes.slice(half)).map((c) => ({ nodes: c.map(({ space: _s, ...x }) => x) })),
      (i) => `user:${i % 10}`,
    );
    const concEdgeBodies = bodiesOf(
      chunks(laterEdges).map((c) => ({ edges: c })),
      (i) => `user:${i % 10}`,
    );

    let server: ServerProcess | null = await spawnServer();
    const dataDir = server.dataDir;
    const rows: BenchRow[] = [];
    try {
      // The first write opens the search tables: kept out of the timed import.
      await post(server.base, JSON.stringify({ space: 'warm-up', nodes: [{ id: 'warm-up', kind: 'claim', statement: 'warm up' }] }));
      const seqRate = await importBodies(server.base, 'import 1 client', seqBodies, 1);
      const t0 = performance.now();
      await importBodies(server.base, 'import nodes 4 clients', concNodeBodies, CLIENTS);
      await importBodies(server.base, 'import edges 4 clients', concEdgeBodies, CLIENTS);
      const concRows = concNodeBodies.reduce((a, b) => a + b.rows, 0) + concEdgeBodies.reduce((a, b) => a + b.rows, 0);
      const concRate = concRows / ((performance.now() - t0) / 1000);
      const rssAfterImport = rssMb(server.child.pid);
      const indexWait = await searchCaughtUp(server.base);
      const base = server.base;
      const now = new Date(Date.now() + 1000).toISOString();
      const samples = Math.max(200, Math.round(1000 * Math.min(1, scale * 10)));
      // Interleaved, so background work (index maintenance, GC) weighs on every kind alike.
      const readSamples = async (seed: number): Promise<Record<'listPlain' | 'listFiltered' | 'listValid' | 'gets', number[]>> => {
        const r2 = rng(seed);
        const out = { listPlain: [] as number[], listFiltered: [] as number[], listValid: [] as number[], gets: [] as number[] };
        const sample = async (into: number[], url: string): Promise<void> => {
          const t = performance.now();
          await getJson(url);
          into.push(performance.now() - t);
        };
        for (let i = 0; i < samples; i++) {
          await sample(out.listPlain, `${base}/v1/memories?as_of=${now}&limit=100`);
          await sample(
            out.listFiltered,
            `${base}/v1/memories?as_of=${now}&limit=100&space=user:${i % 10}&kind=${KINDS[i % 4]}&category=topic-${(i * 7) % 20}`,
          );
          await sample(
            out.listValid,
            `${base}/v1/memories?as_of=${now}&limit=100&valid_at=${iso(T0 + Math.floor(r2() * n) * 1_000_000)}&space=user:${Math.floor(r2() * 10)}`,
          );
          await sample(out.gets, `${base}/v1/memories/n${Math.floor(r2() * n)}?as_of=${now}`);
        }
        return out;
      };
      // First while the search index still builds its full-text and vector indexes over the import
      // (LanceDB's HNSW build takes minutes of CPU on two cores), then once the server is quiet.
      const busyReads = await readSamples(7);
      const settling = await untilQuiet(server.child.pid, { maxMs: 600_000 });
      const { listPlain, listFiltered, listValid, gets } = await readSamples(8);
      const rss = rssMb(server.child.pid);

      // Small writes, one after another: one node and one edge to a node of the import per request.
      const small: number[] = [];
      for (let i = 0; i < smallWrites; i++) {
        const body = JSON.stringify({
          space: 'user:0',
          nodes: [{ id: `w${i}`, kind: 'claim', statement: `small write ${i} about series ${i % 97}` }],
          edges: [{ source_id: `w${i}`, target_id: `n${i % n}`, edge_type: 'MENTIONS' }],
        });
        const t = performance.now();
        await post(base, body);
        small.push(performance.now() - t);
      }
      await server.stop();
      server = null;
      const tStart = performance.now();
      server = await spawnServer({ dataDir });
      await waitUp(server.base);
      const startup = (performance.now() - tStart) / 1000;
      await server.stop();
      server = null;

      const bare = await bareKuzu(nodes, edges, smallWrites);
      const best = Math.max(seqRate, concRate);
      const smallP50 = median(small),
        smallP95 = percentile(small, 95);
      rows.push(
        {
          metric: `import rows/s, 1 client (${seqBodies.length} requests)`,
          value: fmt(seqRate, 0),
          target: '>= 15,000',
          met: seqRate >= 15_000,
        },
        {
          metric: `import rows/s, ${CLIENTS} clients (${concNodeBodies.length + concEdgeBodies.length} requests)`,
          value: fmt(concRate, 0),
          target: '>= 10,000',
          met: concRate >= 10_000,
        },
        { metric: 'bare Kuzu COPY rows/s (same rows, 1,000-row batches)', value: fmt(bare.copy, 0), target: '', met: null },
        { metric: 'bare Kuzu UNWIND rows/s (same rows, 1,000-row batches)', value: fmt(bare.unwind, 0), target: '', met: null },
        {
          metric: 'import 1 client / bare Kuzu COPY',
          value: `${fmt((100 * seqRate) / bare.copy, 0)}%`,
          target: '>= 50%',
          met: seqRate / bare.copy >= 0.5,
        },
        {
          metric: 'import / bare Kuzu UNWIND',
          value: `${fmt((100 * best) / bare.unwind, 0)}%`,
          target: '>= 40%',
          met: best / bare.unwind >= 0.4,
          note: 'best of 1 and 4 clients',
        },
        {
          metric: `small write p50 / p95 ms (1 node + 1 edge, ${smallWrites} sequential requests)`,
          value: `${fmt(smallP50)} / ${fmt(smallP95)}`,
          target: 'p50 <= 5, p95 <= 20',
          met: smallP50 <= 5 && smallP95 <= 20,
          note: 'over HTTP, after the import',
        },
        {
          metric: 'bare Kuzu prepared CREATE p50 / p95 ms, autocommit (1 node)',
          value: `${fmt(median(bare.createAuto))} / ${fmt(percentile(bare.createAuto, 95))}`,
          target: '',
          met: null,
        },
        {
          metric: 'bare Kuzu prepared CREATE p50 / p95 ms, BEGIN..COMMIT (1 node + 1 edge)',
          value: `${fmt(median(bare.createTx))} / ${fmt(percentile(bare.createTx, 95))}`,
          target: '',
          met: null,
        },
        {
          metric: 'search index catch-up after import, s',
          value: fmt(indexWait),
          target: '',
          met: null,
          note: 'the list and get rows above the next one are measured once the server is quiet',
        },
        {
          metric: 'list p50 / p95 ms (limit 100, no filter)',
          value: `${fmt(median(listPlain))} / ${fmt(percentile(listPlain, 95))}`,
          target: 'p95 <= 10',
          met: percentile(listPlain, 95) <= 10,
        },
        {
          metric: 'list p50 / p95 ms (space+kind+category)',
          value: `${fmt(median(listFiltered))} / ${fmt(percentile(listFiltered, 95))}`,
          target: 'p95 <= 10',
          met: percentile(listFiltered, 95) <= 10,
        },
        {
          metric: 'list p50 / p95 ms (space+valid_at)',
          value: `${fmt(median(listValid))} / ${fmt(percentile(listValid, 95))}`,
          target: 'p95 <= 10',
          met: percentile(listValid, 95) <= 10,
        },
        {
          metric: 'get p50 / p95 ms',
          value: `${fmt(median(gets))} / ${fmt(percentile(gets, 95))}`,
          target: 'p95 <= 5',
          met: percentile(gets, 95) <= 5,
        },
        {
          metric: 'get p50 / p95 ms while the search index builds after the import',
          value: `${fmt(median(busyReads.gets))} / ${fmt(percentile(busyReads.gets, 95))}`,
          target: '',
          met: null,
          note: `list p95 ${fmt(percentile(busyReads.listPlain, 95))} ms meanwhile; the server was busy ${fmt(settling.busySeconds, 0)} s more (${fmt(settling.cpuSeconds, 0)} CPU s)${settling.quiet ? '' : ', then the wait gave up'}`,
        },
        {
          metric: 'server RSS MB (after import / after reads)',
          value: `${fmt(rssAfterImport, 0)} / ${fmt(rss, 0)}`,
          target: '',
          met: null,
        },
        { metric: `start-up s (reload ${nodes.length + edges.length + 2 * smallWrites} rows)`, value: fmt(startup), target: '', met: null },
      );
      return rows;
    } finally {
      await server?.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
