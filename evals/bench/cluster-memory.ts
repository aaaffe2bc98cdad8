// The memory-bound load of the cluster bench: 30 tenants of CLUSTER_MEMORY_ROWS rows each (the issue's
// figure is 20,000) on servers whose read-model budget (SVC_MEMORY_MB) holds about 10 of them, so one
// server keeps evicting and reloading tenants while three hold theirs. All tenants are seeded on s1, then
// measured on 1 server, moved with `memory-ledger move` (in process) to spread over 2, measured, spread
// over 3, measured: writes (rows/s) and searches (p50/p95) at once, each request to a random tenant.
import { moveTenant } from '../../server/cluster/move.ts';
import { Cluster, OPERATOR_KEY, SERVERS, type ServerId } from '../../test/cluster/harness.ts';
import { untilQuiet } from '../lib/proc.ts';
import type { BenchRow } from './section.ts';

const TENANTS = Array.from({ length: 30 }, (_, i) => `m${String(i).padStart(2, '0')}`);
const keyOf = (t: string): string => `memory-key-${t}-0123456789abcdef`;
const REGIONS = ['Assam', 'Darjeeling', 'Uji', 'Yunnan', 'Kenya', 'Ceylon', 'Fujian'];
/** The read model's own estimate per row (storage/read/resident-views.ts), to size a budget of ~10 tenants. */
const BYTES_PER_ROW = 750;
/**
 * A searched space's in-memory copy per row (storage/search/copies/space-copies.ts: two vectors of 384 and
 * 100 floats, the row's cells, its postings): each tenant here is one space, so the copies' budget
 * (SVC_SEARCH_SPACES_MB) is sized to ~10 tenants too, or every search would reload its space's copy.
 */
const COPY_BYTES_PER_ROW = 2_800;
const SEED_BATCH = 1_000;
const CLIENTS = 3;

/** Where tenant `i` lives with `count` servers: going from 2 to 3, only a third of the tenants move. */
const homeOf = (i: number, count: number): ServerId => (count === 1 ? 's1' : count === 2 || i % 6 < 4 ? (i % 2 === 0 ? 's1' : 's2') : 's3');

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? NaN) : NaN;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

function nodes(tenant: string, from: number, n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, j) => {
    const i = from + j;
    return {
      id: `${tenant}-r${i}`,
      kind: 'claim',
      statement: `Row ${i} of ${tenant}: the ${REGIONS[i % REGIONS.length]} tea harvest sold at ${10 + (i % 97)} dollars a kilo`,
      asserted_at: '2024-05-01T00:00:00Z',
    };
  });
}

/** Seeds every tenant with `rows` rows on whatever server it is placed on, CLIENTS requests at a time. */
async function seed(cluster: Cluster, rows: number): Promise<{ rate: number; timedOut: number }> {
  let timedOut = 0;
  const jobs: [string, number][] = [];
  for (let from = 0; from < rows; from += SEED_BATCH) for (const t of TENANTS) jobs.push([t, from]);
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    for (let job = jobs.shift(); job; job = jobs.shift()) {
      const [t, from] = job;
      const body = { space: `user:${t}`, nodes: nodes(t, from, Math.min(SEED_BATCH, rows - from)) };
      for (let attempt = 0; ; attempt++) {
        // Writes are idempotent by content: a request the client gave up on is sent again as it was.
        const r = await cluster.request('POST', '/v1/memories', { key: keyOf(t), body }).catch((e: unknown) => {
          if (attempt < 120 && e instanceof DOMException && e.name === 'TimeoutError') return null;
          throw e;
        });
        if (r === null) {
          timedOut++;
          continue;
        }
        if (r.status === 200) break;
        // Bulk writes are heavy: a busy server refuses them with a Retry-After, which is honoured; a 504
        // (cancelled at its deadline while waiting for a turn) wrote nothing and says to retry too.
        if (attempt >= 120 || (r.status !== 503 && r.status !== 429 && r.status !== 504))
          throw new Error(`seeding ${t} at ${from}: ${r.status} ${r.text.slice(0, 200)}`);
        await new Promise((res) => setTimeout(res, 1_000 * Number(r.headers.get('retry-after') ?? '1')));
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, worker));
  return { rate: (rows * TENANTS.length) / ((performance.now() - t0) / 1000), timedOut };
}

/** A request's answer, or null when the client gave up on it (its 30 s timeout): a failure, not a crash. */
const orTimeout = <T>(p: Promise<T>): Promise<T | null> =>
  p.catch((e: unknown) => {
    if (e instanceof DOMException && e.name === 'TimeoutError') return null;
    throw e;
  });

interface LoadResult {
  writeRowsPerS: number;
  searches: number[];
  failed: number;
}

/**
 * Waits until every server has been quiet (no CPU) for a few seconds: after seeding or moves their search
 * indexes are still catching up and optimizing, and a load measured during that work measures it.
 */
async function settled(cluster: Cluster): Promise<string> {
  const waits = await Promise.all(SERVERS.map((s) => untilQuiet(cluster.pid(s), { quietMs: 5000, maxMs: 1_800_000 })));
  const busiest = Math.max(...waits.map((w) => w.busySeconds));
  const cpu = waits.reduce((sum, w) => sum + w.cpuSeconds, 0);
  return `the servers settled in ${busiest.toFixed(0)} s (${cpu.toFixed(0)} CPU s)${waits.every((w) => w.quiet) ? '' : ', still busy after 30 min'}`;
}

/** CLIENTS writers (10-row batches) and CLIENTS searchers for `seconds`, each request to a random tenant. */
async function load(cluster: Cluster, seconds: number, tag: string): Promise<LoadResult> {
  // One read of every tenant first: a server's first touch of a tenant is a load whatever the budget.
  for (const t of TENANTS) await cluster.request('GET', '/v1/memories?as_of=now&limit=1', { key: keyOf(t) });
  const deadline = performance.now() + seconds * 1000;
  let written = 0;
  let failed = 0;
  let n = 0;
  const searches: number[] = [];
  const writer = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const t = pick(TENANTS);
      const batch = nodes(t, 0, 10).map((node, j) => ({ ...node, id: `${t}-${tag}-${++n}-${j}` }));
      const r = await orTimeout(cluster.request('POST', '/v1/memories', { key: keyOf(t), body: { space: `user:${t}`, nodes: batch } }));
      if (r?.status === 200) written += batch.length;
      else failed++;
    }
  };
  const searcher = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const t = pick(TENANTS);
      const body = { query: `${pick(REGIONS)} tea harvest price`, as_of: 'now', space: `user:${t}`, limit: 10 };
      const r = await orTimeout(cluster.request('POST', '/v1/search', { key: keyOf(t), body }));
      if (r?.status === 200) searches.push(r.ms);
      else failed++;
    }
  };
  const t0 = performance.now();
  await Promise.all([...Array.from({ length: CLIENTS }, writer), ...Array.from({ length: CLIENTS }, searcher)]);
  return { writeRowsPerS: written / ((performance.now() - t0) / 1000), searches, failed };
}

export async function memoryBoundFigures(rowsPerTenant: number, seconds: number): Promise<BenchRow[]> {
  // Megabytes holding about 10 tenants' rows at `bytesPerRow` each.
  const tenTenantsMb = (bytesPerRow: number): number => Math.max(16, Math.ceil((rowsPerTenant * bytesPerRow * 10.5) / 2 ** 20));
  const budgetMb = tenTenantsMb(BYTES_PER_ROW);
  const copiesMb = tenTenantsMb(COPY_BYTES_PER_ROW);
  const keys = Object.fromEntries(TENANTS.map((t) => [keyOf(t), t]));
  const cluster = await Cluster.start(keys, { SVC_MEMORY_MB: String(budgetMb), SVC_SEARCH_SPACES_MB: String(copiesMb) });
  const rows: BenchRow[] = [];
  const app = `30 tenants × ${rowsPerTenant} rows, SVC_MEMORY_MB=${budgetMb} and SVC_SEARCH_SPACES_MB=${copiesMb} (~10 tenants each) per server`;
  try {
    const where = new Map<string, ServerId>();
    for (const t of TENANTS) {
      await cluster.registerKey(keyOf(t), t);
      await cluster.place(t, 's1', 1);
      where.set(t, 's1');
    }
    await cluster.waitFor('the agent routing the 30 keys', 30_000, async () => (await cluster.mapEntries('keys')).size >= TENANTS.length);
    const seeded = await seed(cluster, rowsPerTenant);
    const resent = seeded.timedOut > 0 ? `; ${seeded.timedOut} requests sent again after the client's 30 s timeout` : '';
    rows.push({
      metric: 'memory-bound: seeding on one server (rows/s)',
      value: seeded.rate.toFixed(0),
      target: '',
      met: null,
      note: `${app}${resent}; ${await settled(cluster)} before the load below`,
    });
    for (const count of [1, 2, 3]) {
      const t0 = performance.now();
      let moved = 0;
      for (const [i, t] of TENANTS.entries()) {
        const home = homeOf(i, count);
        if (where.get(t) === home) continue;
        await moveTenant({ etcd: cluster.etcd, operatorKey: OPERATOR_KEY, tenant: t, to: home, log: () => undefined });
        where.set(t, home);
        moved++;
      }
      if (moved > 0)
        rows.push({
          metric: `memory-bound: spreading to ${count} servers`,
          value: `${moved} tenants moved in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
          target: '',
          met: null,
          note: `${await settled(cluster)} before the load below`,
        });
      const r = await load(cluster, seconds, `c${count}`);
      rows.push({
        metric: `memory-bound, ${count} server${count > 1 ? 's' : ''}: writes (rows/s) and search p50 / p95 (ms)`,
        value: `${r.writeRowsPerS.toFixed(0)} rows/s; search ${quantile(r.searches, 0.5).toFixed(0)} / ${quantile(r.searches, 0.95).toFixed(0)} ms`,
        target: '',
        met: null,
        note: `${CLIENTS} writers of 10-row batches and ${CLIENTS} searchers, ${seconds} s, random tenants; ${r.searches.length} searches${r.failed ? `, ${r.failed} failed` : ''}`,
      });
    }
  } finally {
    await cluster.stop();
  }
  return rows;
}
