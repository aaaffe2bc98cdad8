// Search at scale, in process: 100k blocks (times --scale) and 10k causal edges written through the
// ledger, then the search index built from it (indexing throughput with the local embedder, then the
// full-text and HNSW index build), then hybrid searches at depth 1 (latency p50/p95), answered exactly
// (the default: vector queries scan the rows their filter admits) and, in alternate rounds, with the HNSW
// index's approximate vector answers (SVC_SEARCH_EXACT_ROWS=0), the price of answers a moved tenant gets
// alike. Last, a
// real server given 20 × 1,000 blocks over HTTP: its indexing after the last acknowledged write, and RSS.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../storage/log/ledger.ts';
import { LocalEmbedder } from '../../storage/search/embed/local-embedder.ts';
import { search } from '../../storage/search/search.ts';
import { SearchIndex } from '../../storage/search/search-index.ts';
import { rssMb, untilQuiet } from '../lib/proc.ts';
import { spawnServer } from '../lib/spawn-server.ts';
import { fmt, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const TENANT = 'bench';
/** The bench corpus's vocabulary (news-like words); space-search adds a few personal ones. */
export const WORDS = (
  'rain flood rail delay bank earnings rate inflation wheat harvest drought price energy grid outage storm port ' +
  'shipping strike wage factory output demand supply credit loan default housing market rent tax tariff export import ' +
  'currency bond yield oil gas coal solar wind battery chip shortage vaccine hospital school traffic bridge river heat ' +
  'frost crop fertiliser protest election policy budget deficit debt merger layoff hiring retail sales tourism airline'
).split(' ');

/** The linear congruential generator this bench's rows were always drawn with (kept for comparable runs). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const sentence = (rand: () => number, n: number): string =>
  Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)] ?? 'rain').join(' ');

async function build(dir: string, blocks: number, rand: () => number): Promise<Ledger> {
  const ledger = await Ledger.open(dir);
  const BATCH = 10_000;
  for (let i = 0; i < blocks; i += BATCH) {
    const nodes = Array.from({ length: Math.min(BATCH, blocks - i) }, (_, j) => ({
      id: `n${i + j}`,
      kind: 'claim',
      category: `topic-${(i + j) % 20}`,
      statement: `Report ${i + j}: ${sentence(rand, 8 + Math.floor(rand() * 8))}`,
    }));
    const edges = Array.from({ length: Math.floor(nodes.length / 10) }, (_, k) => ({
      source_id: `n${i + k * 10}`,
      target_id: `n${i + k * 10 + 1 + Math.floor(rand() * 8)}`,
      edge_type: 'CAUSES',
    }));
    await ledger.write(TENANT, { space: 'news', nodes, edges });
    progress('search bench: writing', Math.min(i + BATCH, blocks), blocks);
  }
  return ledger;
}

async function latencies(index: SearchIndex, ledger: Ledger, rand: () => number, n: number): Promise<number[]> {
  const asOf = ledger.now();
  const view = await ledger.load(TENANT);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await search(index, view, {
      query: sentence(rand, 3),
      asOf,
      now: asOf,
      limit: 10,
      depth: 1,
      families: [],
      space: i % 2 ? 'news' : undefined,
    });
    out.push(performance.now() - t0);
  }
  return out;
}

/** The index under `dir` opened with SVC_SEARCH_EXACT_ROWS set to `exactRows` (unset: the default). */
async function openWith(dir: string, ledger: Ledger, exactRows: string | undefined): Promise<SearchIndex> {
  const before = process.env.SVC_SEARCH_EXACT_ROWS;
  if (exactRows === undefined) delete process.env.SVC_SEARCH_EXACT_ROWS;
  else process.env.SVC_SEARCH_EXACT_ROWS = exactRows;
  try {
    const index = await SearchIndex.open(join(dir, 'search'), new LocalEmbedder(), ledger);
    await index.caughtUp();
    return index;
  } finally {
    if (before === undefined) delete process.env.SVC_SEARCH_EXACT_ROWS;
    else process.env.SVC_SEARCH_EXACT_ROWS = before;
  }
}

/**
 * A real server given 20 writes of 1,000 blocks over HTTP: how long it keeps indexing after the last write
 * is acknowledged (until its CPU is quiet for 3 s), and its RSS then. Linux only (/proc).
 */
async function serverCatchUp(batches: number): Promise<BenchRow[]> {
  const server = await spawnServer();
  const pid = server.child.pid ?? 0;
  try {
    const rand = rng(11);
    for (let b = 0; b < batches; b++) {
      const nodes = Array.from({ length: 1000 }, (_, i) => ({
        id: `s${b}-${i}`,
        kind: 'claim',
        statement: `Report ${b}-${i}: ${sentence(rand, 10)}`,
      }));
      const r = await fetch(`${server.base}/v1/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ space: 'news', nodes }),
      });
      if (!r.ok) throw new Error(`write failed: ${r.status} ${await r.text()}`);
      await r.text();
      progress('search bench: server writes', b + 1, batches);
    }
    const { busySeconds: busy, cpuSeconds: cpu } = await untilQuiet(pid);
    const rows = (batches * 1000).toLocaleString('en-US');
    return [
      {
        metric: `server indexing after the last write is acknowledged (${batches} x 1,000 blocks over HTTP)`,
        value: `${fmt(busy)} s (${fmt(cpu)} CPU s)`,
        target: '',
        met: null,
      },
      { metric: `server RSS after ${rows} blocks written and indexed`, value: `${fmt(rssMb(pid), 0)} MB`, target: '', met: null },
    ];
  } finally {
    await server.stop();
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}

export const searchBench: BenchSection = {
  name: 'search',
  async run({ scale }) {
    const log = (m: string): void => {
      process.stderr.write(`search bench: ${m}\n`);
    };
    const blocks = Math.max(1000, Math.round(100_000 * scale));
    const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-search-'));
    const rand = rng(7);
    try {
      const ledger = await build(join(dir, 'data'), blocks, rand);
      log(`${blocks} blocks written; indexing`);
      const t0 = performance.now();
      const index = await SearchIndex.open(join(dir, 'search'), new LocalEmbedder(), ledger);
      await index.caughtUp();
      const indexSeconds = (performance.now() - t0) / 1000;
      log(`indexed in ${indexSeconds.toFixed(1)} s; building full-text and HNSW indexes`);
      // The indexer brings the full-text index up to date and builds HNSW once its queue is quiet.
      const t1 = performance.now();
      await index.idle();
      // The full optimize a server runs once writes pause (1 s after the last), done here so it does not
      // run during the timed searches below.
      await index.optimize([TENANT]);
      const buildSeconds = (performance.now() - t1) / 1000;
      log(`indexes built in ${buildSeconds.toFixed(1)} s; searching`);
      await index.close();
      // The same searches answered as configured by default (vector queries exact while the filter admits
      // at most EXACT_VECTOR_ROWS rows, by the HNSW index beyond) and exactly at any size
      // (SVC_SEARCH_EXACT_ROWS=1000000), on one index, in alternate rounds so a shared machine's load
      // weighs on both alike.
      const exact = await openWith(dir, ledger, undefined);
      const approximate = await openWith(dir, ledger, '1000000');
      const [exactRand, approximateRand] = [rng(9), rng(9)];
      await latencies(exact, ledger, exactRand, 10);
      await latencies(approximate, ledger, approximateRand, 10);
      const ms: number[] = [];
      const annMs: number[] = [];
      for (let round = 0; round < 6; round++) {
        ms.push(...(await latencies(exact, ledger, exactRand, 50)));
        annMs.push(...(await latencies(approximate, ledger, approximateRand, 50)));
      }
      await exact.close();
      await approximate.close();
      await ledger.close();
      const rate = blocks / indexSeconds;
      const endToEnd = blocks / (indexSeconds + buildSeconds);
      const p50 = percentile(ms, 50);
      const p95 = percentile(ms, 95);
      return [
        {
          metric: `index throughput, local embedder (${blocks.toLocaleString('en-US')} rows)`,
          value: `${fmt(rate)} rows/s`,
          target: '>= 20,000 rows/s',
          met: rate >= 20_000,
        },
        { metric: 'full-text + HNSW index build', value: `${fmt(buildSeconds)} s`, target: '', met: null },
        {
          metric: 'index throughput end to end (rows, then full-text + HNSW built)',
          value: `${fmt(endToEnd)} rows/s`,
          target: '',
          met: null,
        },
        {
          metric: `search p50 (hybrid, depth 1, ${blocks.toLocaleString('en-US')} blocks)`,
          value: `${fmt(p50)} ms`,
          target: '',
          met: null,
        },
        {
          metric: `search p95 (hybrid, depth 1, ${blocks.toLocaleString('en-US')} blocks)`,
          value: `${fmt(p95)} ms`,
          target: '<= 25 ms',
          met: p95 <= 25,
        },
        {
          metric: `search p50 / p95, vector queries exact at any size (SVC_SEARCH_EXACT_ROWS=1000000)`,
          value: `${fmt(percentile(annMs, 50))} / ${fmt(percentile(annMs, 95))} ms`,
          target: '',
          met: null,
        },
        ...(await serverCatchUp(Math.max(2, Math.round(20 * scale)))),
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
