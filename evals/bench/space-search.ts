// Search inside one user's space as the application around it grows, in process (no HTTP): one tenant of
// 30k and 300k rows (SPACE_SEARCH_ROWS=30000,300000,3000000 to choose), users × 150 rows each written
// through the ledger, the search index built and optimized as a server leaves it once writes pause, then
// searches confined to one user's space: latency p50/p95 of the index's candidates alone and of the whole
// search, the event loop's longest stall while searches run, and two searches at once against one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Ledger } from '../../storage/ledger.ts';
import { contentWords } from '../../storage/search/text-features.ts';
import { LocalEmbedder } from '../../storage/search/local-embedder.ts';
import { search } from '../../storage/search/search.ts';
import { SearchIndex } from '../../storage/search/search-index.ts';
import { fmt, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const TENANT = 'app';
const PER_SPACE = 150;
const SEARCHES = 300;
const WORDS = (
  'rain flood rail delay bank earnings rate inflation wheat harvest drought price energy grid outage storm port ' +
  'shipping strike wage factory output demand supply credit loan default housing market rent tax tariff export import ' +
  'currency bond yield oil gas coal solar wind battery chip shortage vaccine hospital school traffic bridge river heat ' +
  'frost crop fertiliser protest election policy budget deficit debt merger layoff hiring retail sales tourism airline ' +
  'garden piano violin cousin wedding holiday museum novel painting hiking camping recipe dinner puppy kitten marathon'
).split(' ');

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const pick = (rand: () => number): string => WORDS[Math.floor(rand() * WORDS.length)] ?? 'rain';
const sentence = (rand: () => number, n: number): string => Array.from({ length: n }, () => pick(rand)).join(' ');
const space = (u: number): string => `user:${u}`;

async function build(dir: string, users: number, rand: () => number): Promise<Ledger> {
  const ledger = await Ledger.open(dir);
  for (let u = 0; u < users; u++) {
    const nodes = Array.from({ length: PER_SPACE }, (_, j) => ({
      id: `u${u}-${j}`,
      kind: 'claim',
      statement: `User ${u} note ${j}: ${sentence(rand, 8 + Math.floor(rand() * 8))}`,
    }));
    await ledger.write(TENANT, { space: space(u), nodes, edges: [] });
    progress('space-search bench: writing', u + 1, users);
  }
  return ledger;
}

interface Measured {
  candidates: number[];
  search: number[];
  /** Longest event-loop stall seen while the searches ran, ms. */
  stallMax: number;
  stallP99: number;
  /** Searches a second, one at a time and two at once. */
  one: number;
  two: number;
}

async function measure(index: SearchIndex, ledger: Ledger, users: number, rand: () => number): Promise<Measured> {
  const asOf = ledger.now();
  const view = ledger.view(TENANT);
  const params = (): { query: string; space: string } => ({ query: sentence(rand, 3), space: space(Math.floor(rand() * users)) });
  const once = async (): Promise<number> => {
    const p = params();
    const t0 = performance.now();
    await index.caughtUp(TENANT, p.space);
    await search(index, view, { query: p.query, asOf, now: asOf, limit: 10, depth: 1, families: [], space: p.space });
    return performance.now() - t0;
  };
  for (let i = 0; i < 30; i++) await once(); // warm-up: caches, JIT
  const candidates: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const p = params();
    const t0 = performance.now();
    await index.candidates(TENANT, contentWords(p.query), p.query, { asOf, allKnown: true, space: p.space }, 40);
    candidates.push(performance.now() - t0);
  }
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const ms: number[] = [];
  const t1 = performance.now();
  for (let i = 0; i < SEARCHES; i++) ms.push(await once());
  const one = SEARCHES / ((performance.now() - t1) / 1000);
  h.disable();
  const t2 = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      for (let i = 0; i < SEARCHES / 2; i++) await once();
    }),
  );
  const two = SEARCHES / ((performance.now() - t2) / 1000);
  return { candidates, search: ms, stallMax: h.max / 1e6, stallP99: h.percentile(99) / 1e6, one, two };
}

async function oneSize(rows: number): Promise<BenchRow[]> {
  const users = Math.max(1, Math.round(rows / PER_SPACE));
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-space-'));
  const rand = rng(29);
  const log = (m: string): void => void process.stderr.write(`space-search bench (${rows} rows): ${m}\n`);
  try {
    const t0 = performance.now();
    const ledger = await build(join(dir, 'data'), users, rand);
    log(`written in ${((performance.now() - t0) / 1000).toFixed(1)} s; indexing`);
    const t1 = performance.now();
    const index = await SearchIndex.open(join(dir, 'search'), new LocalEmbedder(), ledger);
    await index.caughtUp();
    await index.idle();
    await index.optimize([TENANT]);
    log(`indexed and optimized in ${((performance.now() - t1) / 1000).toFixed(1)} s; searching`);
    const m = await measure(index, ledger, users, rand);
    await index.close();
    await ledger.close();
    const label = `${rows.toLocaleString('en-US')} rows, ${users.toLocaleString('en-US')} spaces`;
    return [
      {
        metric: `candidates p50 / p95, in one space (${label})`,
        value: `${fmt(percentile(m.candidates, 50))} / ${fmt(percentile(m.candidates, 95))} ms`,
        target: '',
        met: null,
      },
      {
        metric: `search p50 / p95, in one space, depth 1 (${label})`,
        value: `${fmt(percentile(m.search, 50))} / ${fmt(percentile(m.search, 95))} ms`,
        target: '<= 15 / 40 ms',
        met: percentile(m.search, 50) <= 15 && percentile(m.search, 95) <= 40,
      },
      {
        metric: `event-loop stall while searching, max / p99 (${label})`,
        value: `${fmt(m.stallMax)} / ${fmt(m.stallP99)} ms`,
        target: 'max <= ~2 ms',
        met: m.stallMax <= 2.5,
      },
      {
        metric: `searches/s, one at a time / two at once (${label})`,
        value: `${fmt(m.one, 0)} / ${fmt(m.two, 0)} (x${fmt(m.two / m.one)})`,
        target: 'two >= 1.6x one',
        met: m.two >= 1.6 * m.one,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const spaceSearchBench: BenchSection = {
  name: 'space-search',
  async run() {
    const sizes = (process.env.SPACE_SEARCH_ROWS ?? '30000,300000')
      .split(',')
      .map(Number)
      .filter((n) => n > 0);
    const rows: BenchRow[] = [];
    for (const n of sizes) rows.push(...(await oneSize(n)));
    return rows;
  },
};
