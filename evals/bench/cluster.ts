// `npm run bench -- --only cluster`: the cluster of the cluster test (etcd, HAProxy, three servers on
// loopback, the placement agent). Writes/s with the 30 tenants placed on 1, 2 and 3 servers, the latency
// HAProxy adds, the time from a placement write in etcd to the first request routed the new way, and a
// tenant moved with `memory-ledger move` (in-process) while about 50 writes/s continue: seconds per 10k
// rows (export and import calls, the target's search answering as the source did), how long writes
// were frozen, and what the writer was refused.
// With CLUSTER_MEMORY_ROWS set, also the memory-bound load of cluster-memory.ts.
// Needs Debian's haproxy and etcd-server; without them the section says so and measures nothing.
import { moveTenant } from '../../server/cluster/move.ts';
import { Cluster, missingBinaries, OPERATOR_KEY, SERVERS, type ServerId } from '../../test/cluster/harness.ts';
import { liveIds, seedTenant, serverNow, startWriter, withoutAnswerTime } from '../../test/cluster/tenant-load.ts';
import { memoryBoundFigures } from './cluster-memory.ts';
import type { BenchRow, BenchSection } from './section.ts';

const TENANTS = Array.from({ length: 30 }, (_, i) => `b${String(i).padStart(2, '0')}`);
const keyOf = (t: string): string => `bench-key-${t}-0123456789abcdef`;
const MOVED = 'moved';

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? NaN) : NaN;
};

export const clusterBench: BenchSection = {
  name: 'cluster',
  async run({ scale }) {
    const missing = missingBinaries();
    if (missing) return [{ metric: 'cluster', value: 'not run', target: '', met: null, note: missing }];
    const keys: Record<string, string> = { [keyOf(MOVED)]: MOVED };
    for (const t of TENANTS) keys[keyOf(t)] = t;
    const cluster = await Cluster.start(keys);
    const rows: BenchRow[] = [];
    let epoch = 0;
    const placeAll = async (servers: readonly ServerId[]): Promise<void> => {
      epoch++;
      for (const [i, t] of TENANTS.entries()) await cluster.place(t, servers[i % servers.length] ?? 's1', epoch);
      await cluster.waitFor('the agent routing the new placements', 30_000, async () => {
        const map = await cluster.mapEntries('keys');
        return [...map.values()].filter((s) => servers.includes(s as ServerId)).length === TENANTS.length;
      });
    };
    try {
      for (const t of TENANTS) await cluster.registerKey(keyOf(t), t);
      const seconds = Math.max(3, Math.round(8 * scale));
      let n = 0;
      for (const count of [1, 2, 3]) {
        const servers = SERVERS.slice(0, count);
        await placeAll(servers);
        // Warm-up: every tenant once, so first loads are not timed.
        for (const t of TENANTS) await cluster.request('GET', '/v1/memories?as_of=2030-01-01T00:00:00Z', { key: keyOf(t) });
        let rowsWritten = 0;
        let errors = 0;
        const deadline = performance.now() + seconds * 1000;
        const writer = async (w: number): Promise<void> => {
          for (let i = 0; i < 100_000 && performance.now() < deadline; i++) {
            const t = TENANTS[(w * 7 + i) % TENANTS.length] ?? 'b00';
            const nodes = Array.from({ length: 10 }, () => ({
              id: `w${++n}`,
              kind: 'claim',
              statement: `bench row ${n} of ${t} about tea harvests and prices`,
              asserted_at: '2024-05-01T00:00:00Z',
            }));
            const r = await cluster.request('POST', '/v1/memories', { key: keyOf(t), body: { space: `user:${t}`, nodes } });
            if (r.status === 200) rowsWritten += nodes.length;
            else errors++;
          }
        };
        const t0 = performance.now();
        await Promise.all(Array.from({ length: 6 }, (_, w) => writer(w)));
        const rate = rowsWritten / ((performance.now() - t0) / 1000);
        rows.push({
          metric: `writes, ${count} server${count > 1 ? 's' : ''} (rows/s, 6 clients × 10-row batches)`,
          value: rate.toFixed(0),
          target: '',
          met: null,
          note: errors ? `${errors} failed requests` : `${seconds} s`,
        });
      }

      await placeAll(SERVERS);
      const direct: number[] = [];
      const proxied: number[] = [];
      const home = SERVERS[1 % SERVERS.length] ?? 's2';
      for (let i = 0; i < 300; i++) {
        direct.push(
          (
            await cluster.request('GET', '/v1/memories?as_of=2030-01-01T00:00:00Z&limit=5', {
              key: keyOf('b01'),
              base: cluster.serverUrl(home),
            })
          ).ms,
        );
        proxied.push((await cluster.request('GET', '/v1/memories?as_of=2030-01-01T00:00:00Z&limit=5', { key: keyOf('b01') })).ms);
      }
      rows.push({
        metric: 'latency the proxy adds (list p50 through HAProxy − direct, ms)',
        value: (quantile(proxied, 0.5) - quantile(direct, 0.5)).toFixed(2),
        target: '< 2',
        met: quantile(proxied, 0.5) - quantile(direct, 0.5) < 2,
        note: `p50 ${quantile(direct, 0.5).toFixed(2)} direct, ${quantile(proxied, 0.5).toFixed(2)} proxied; p95 ${quantile(direct, 0.95).toFixed(2)} / ${quantile(proxied, 0.95).toFixed(2)}`,
      });

      const delays: number[] = [];
      for (let round = 0; round < 10; round++) {
        const to: ServerId = round % 2 === 0 ? 's3' : 's2';
        const t0 = performance.now();
        await cluster.place('b01', to, ++epoch);
        for (let i = 0; i < 5_000 && performance.now() - t0 < 5_000; i++) {
          const r = await cluster.request('GET', '/v1/memories?as_of=2030-01-01T00:00:00Z&limit=5', { key: keyOf('b01') });
          if (r.server === to && r.status === 200) break;
        }
        delays.push(performance.now() - t0);
      }
      rows.push({
        metric: 'placement write in etcd to first request routed the new way (ms, p50)',
        value: quantile(delays, 0.5).toFixed(1),
        target: '< 1000',
        met: quantile(delays, 0.5) < 1000,
        note: `max ${Math.max(...delays).toFixed(1)} of ${delays.length}`,
      });

      rows.push(...(await moveFigures(cluster, Math.max(2_000, Math.round(10_000 * scale)))));
    } finally {
      await cluster.stop();
    }
    // Seeding 600k rows takes minutes here, so the memory-bound load runs when asked for.
    const memoryRows = Number(process.env.CLUSTER_MEMORY_ROWS ?? '0');
    if (memoryRows > 0) rows.push(...(await memoryBoundFigures(memoryRows, Number(process.env.CLUSTER_MEMORY_SECONDS ?? '20'))));
    else
      rows.push({
        metric: 'memory-bound load, 1 / 2 / 3 servers',
        value: 'not run',
        target: '',
        met: null,
        note: 'CLUSTER_MEMORY_ROWS=20000 runs it (30 tenants of that many rows; docs/cluster.md has a run)',
      });
    return rows;
  },
};

/** Seeds one tenant of `n` rows on s1, moves it to s2 under a writer of about 50 writes/s, and times it. */
async function moveFigures(cluster: Cluster, n: number): Promise<BenchRow[]> {
  const key = keyOf(MOVED);
  await cluster.registerKey(key, MOVED);
  await cluster.place(MOVED, 's1', 1);
  await cluster.waitFor('the moved tenant routed', 30_000, async () => (await cluster.mapEntries('keys')).size === TENANTS.length + 1);
  await seedTenant(cluster, key, MOVED, n);
  const asOf = await serverNow(cluster);
  const searches = ['Darjeeling tea harvest price', 'what sold at 42 dollars a kilo'].map((query) => ({
    query,
    as_of: asOf,
    space: `user:${MOVED}`,
  }));
  const search = async (body: unknown): Promise<string> =>
    withoutAnswerTime((await cluster.request('POST', '/v1/search', { key, body })).text);
  const before = await Promise.all(searches.map(search));
  const writer = startWriter(cluster, key, MOVED, { perSecond: 50, maxMs: 300_000 });
  await new Promise((r) => setTimeout(r, 1_000));
  const lines: string[] = [];
  const result = await moveTenant({ etcd: cluster.etcd, operatorKey: OPERATOR_KEY, tenant: MOVED, to: 's2', log: (l) => lines.push(l) });
  const moved = performance.now();
  // Index catch-up: until the target's search answers as the source's did (bounded).
  let caughtUp: number | null = null;
  for (let i = 0; i < 600 && performance.now() - moved < 120_000; i++) {
    const r = await cluster.request('POST', '/v1/search', { key, body: searches[0] });
    if (r.server === 's2' && withoutAnswerTime(r.text) === before[0] && (await search(searches[1])) === before[1]) {
      caughtUp = performance.now() - moved;
      break;
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  await new Promise((r) => setTimeout(r, 1_000));
  const report = await writer.stop();
  const present = await liveIds(cluster, key, MOVED);
  const lost = report.acknowledged.filter((id) => !present.has(id)).length;
  const per10k = (s: number): string => ((s * 10_000) / result.rows).toFixed(1);
  return [
    {
      metric: `move: seconds per 10k rows (tenant of ${result.rows} rows, copy passes ${result.rounds})`,
      value: per10k(result.totalSeconds),
      target: '',
      met: null,
      note: `whole move ${result.totalSeconds.toFixed(1)} s; export calls ${per10k(result.exportSeconds)} s/10k, import calls ${per10k(result.importSeconds)} s/10k (each with its transfer)`,
    },
    {
      metric: 'move: target search answering as the source did, after the re-point (s)',
      value: caughtUp === null ? 'not within 120 s' : (caughtUp / 1000).toFixed(1),
      target: '',
      met: caughtUp !== null,
      note: 'index catch-up on the target',
    },
    {
      metric: 'move: writes frozen (s)',
      value: (result.frozenMs / 1000).toFixed(2),
      target: '< 5',
      met: result.frozenMs < 5_000,
      note: `source quiet after ${result.quiesceMs.toFixed(0)} ms; tail ${result.tailRows} rows; the rest is the tail copy and both digests`,
    },
    {
      metric: 'move: writer at ~50/s (acknowledged / refused 503 / refused 421 / lost)',
      value: `${report.acknowledged.length} / ${report.retried503} / ${report.retried421} / ${lost}`,
      target: 'lost 0',
      met: lost === 0 && report.failures.length === 0,
      note: report.failures.length ? report.failures.slice(0, 2).join('; ') : 'refusals retried after Retry-After',
    },
  ];
}
