// Search inside one user's space as the application around it grows, in process (no HTTP): one tenant of
// 30k and 300k rows (SPACE_SEARCH_ROWS=30000,300000,3000000 to choose), users × 150 rows each written
// through the ledger, the search index built and optimized as a server leaves it once writes pause, then
// searches confined to one user's space: latency p50/p95 of the index's candidates alone and of the whole
// search, the event loop's longest stall while searches run, and two searches at once against one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Ledger } from '../../storage/log/ledger.ts';
import { contentWords } from '../../storage/search/embed/text-features.ts';
import { LocalEmbedder } from '../../storage/search/embed/local-embedder.ts';
import { search } from '../../storage/search/search.ts';
import { SearchIndex } from '../../storage/search/search-index.ts';
import { fmt, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';
import { rng, WORDS as NEWS_WORDS } from './search.ts';

const TENANT = 'app';
const PER_SPACE = 150;
const SEARCHES = 300;
const WORDS = [
  ...NEWS_WORDS,
  ...'garden piano violin cousin wedding holiday museum novel painting hiking camping recipe dinner puppy kitten marathon'.split(' '),
];

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
  /** Searches among a few users searched again and again (their copies held), ms. */
  warm: number[];
  /** The index's candidates alone, for the same users, ms. */
  candidates: number[];
  /** The first search of users never searched before (their copies read), ms. */
  cold: number[];
  /** Longest event-loop stall seen while the warm searches ran, ms. */
  stallMax: number;
  stallP99: number;
  /** Searches a second, one at a time and two at once. */
  one: number;
  two: number;
  /** The same without a space: the whole tenant (an application's search across its users). */
  tenant: { latency: number[]; stallMax: number; stallP99: number; one: number; two: number };
}

const TENANT_SEARCHES = 60;

const ACTIVE = 20;
const COLD = 100;

async function measure(index: SearchIndex, ledger: Ledger, users: number, rand: () => number): Promise<Measured> {
  const asOf = ledger.now();
  const view = await ledger.load(TENANT);
  const activeUser = (): string => space(Math.floor(rand() * Math.min(ACTIVE, users)));
  const once = async (user: string | undefined): Promise<number> => {
    const query = sentence(rand, 3);
    const t0 = performance.now();
    await index.caughtUp(TENANT, user);
    await search(index, view, { query, asOf, now: asOf, limit: 10, depth: 1, families: [], space: user });
    return performance.now() - t0;
  };
  for (let i = 0; i < 3 * ACTIVE; i++) await once(activeUser()); // warm-up: copies, caches, JIT
  const candidates: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const query = sentence(rand, 3);
    const t0 = performance.now();
    await index.candidates(TENANT, contentWords(query), query, { asOf, allKnown: true, space: activeUser() }, 40);
    candidates.push(performance.now() - t0);
  }
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const warm: number[] = [];
  const t1 = performance.now();
  for (let i = 0; i < SEARCHES; i++) {
    // Each search from its own task, as a server's requests are: the histogram then sees each search's
    // longest stretch without a turn of the loop (a chain of searches answered from memory never yields).
    await new Promise((r) => setImmediate(r));
    warm.push(await once(activeUser()));
  }
  const one = SEARCHES / ((performance.now() - t1) / 1000);
  h.disable();
  const t2 = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      for (let i = 0; i < SEARCHES / 2; i++) await once(activeUser());
    }),
  );
  const two = SEARCHES / ((performance.now() - t2) / 1000);
  // Users the warm searches never touched, each searched once.
  const cold: number[] = [];
  const step = Math.max(1, Math.floor((users - ACTIVE) / COLD));
  for (let u = ACTIVE; u < users && cold.length < COLD; u += step) cold.push(await once(space(u)));
  // Tenant-wide (no space): the search an application runs across all its users.
  for (let i = 0; i < 5; i++) await once(undefined);
  const ht = monitorEventLoopDelay({ resolution: 1 });
  ht.enable();
  const latency: number[] = [];
  const t3 = performance.now();
  for (let i = 0; i < TENANT_SEARCHES; i++) {
    await new Promise((r) => setImmediate(r));
    latency.push(await once(undefined));
  }
  const tOne = TENANT_SEARCHES / ((performance.now() - t3) / 1000);
  ht.disable();
  const t4 = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      for (let i = 0; i < TENANT_SEARCHES / 2; i++) await once(undefined);
    }),
  );
  const tTwo = TENANT_SEARCHES / ((performance.now() - t4) / 1000);
  const tenant = { latency, stallMax: ht.max / 1e6, stallP99: ht.percentile(99) / 1e6, one: tOne, two: tTwo };
  return { warm, candidates, cold, stallMax: h.max / 1e6, stallP99: h.percentile(99) / 1e6, one, two, tenant };
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
    const label = `${rows.toLocaleString('en-US')} rows, ${users.toLocaleString('en-US')} spaces`;
    const p = (xs: number[]): string => `${fmt(percentile(xs, 50))} / ${fmt(percentile(xs, 95))} ms`;
    const copies = index.spaceCopies();
    await index.close();
    await ledger.close();
    return [
      { metric: `candidates p50 / p95, one space (${label})`, value: p(m.candidates), target: '', met: null },
      {
        metric: `search p50 / p95, one of ${ACTIVE} active users' spaces, depth 1 (${label})`,
        value: p(m.warm),
        target: '<= 15 / 40 ms',
        met: percentile(m.warm, 50) <= 15 && percentile(m.warm, 95) <= 40,
      },
      { metric: `first search of a user not searched before, p50 / p95 (${label})`, value: p(m.cold), target: '', met: null },
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
      { metric: `search p50 / p95, whole tenant (no space), depth 1 (${label})`, value: p(m.tenant.latency), target: '', met: null },
      {
        metric: `event-loop stall while searching the whole tenant, max / p99 (${label})`,
        value: `${fmt(m.tenant.stallMax)} / ${fmt(m.tenant.stallP99)} ms`,
        target: 'max <= ~2 ms',
        met: m.tenant.stallMax <= 2.5,
      },
      {
        metric: `whole-tenant searches/s, one at a time / two at once (${label})`,
        value: `${fmt(m.tenant.one, 0)} / ${fmt(m.tenant.two, 0)} (x${fmt(m.tenant.two / m.tenant.one)})`,
        target: 'two >= 1.6x one',
        met: m.tenant.two >= 1.6 * m.tenant.one,
      },
      {
        metric: `space copies held after the run (${label})`,
        value: `${copies.spaces} spaces, ${fmt(copies.bytes / 1048576, 1)} MB (${copies.loads} loads, mean ${fmt(copies.loadMs / Math.max(1, copies.loads))} ms, ${copies.evictions} dropped)`,
        target: '',
        met: null,
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
