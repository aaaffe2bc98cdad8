// Storage at scale (issue "storage whose cost follows the working set"): ten tenants of 60k rows each
// (times --scale), 30k nodes and 30k edges apiece, imported over HTTP into a real server; then a restart
// under a 300 MB read-model budget: time to the first answered read, RSS after start, the first read of a
// cold tenant, RSS with one tenant in use, and RSS after touching all ten.
import { rmSync } from 'node:fs';
import { rssMb } from '../lib/proc.ts';
import { spawnServer } from '../lib/spawn-server.ts';
import { fmt, median, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const TENANTS = 10;
const BATCH = 1000;

const keys = Array.from({ length: TENANTS }, (_, t) => `k${t}=tenant${t}`).join(',');

async function post(base: string, key: string, body: unknown): Promise<void> {
  const r = await fetch(`${base}/v1/memories`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`import failed: ${r.status} ${(await r.text()).slice(0, 300)}`);
}

async function firstRead(base: string, key: string): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${base}/v1/memories?as_of=now&limit=10`, { headers: { authorization: `Bearer ${key}` } });
  if (r.status !== 200) throw new Error(`read failed: ${r.status}`);
  await r.json();
  return performance.now() - t0;
}

/** One client per tenant, each writing small requests one after another; all tenants at once. */
async function parallelWrites(base: string, prefix: string, perClient = 100): Promise<string> {
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: TENANTS }, async (_, t) => {
      for (let i = 0; i < perClient; i++) {
        const t1 = performance.now();
        await post(base, `k${t}`, {
          space: `user:${t}`,
          nodes: [{ id: `${prefix}${i}`, kind: 'claim', statement: `parallel write ${i} of tenant ${t}` }],
          edges: [{ source_id: `${prefix}${i}`, target_id: `n${i}`, edge_type: 'MENTIONS' }],
        });
        latencies.push(performance.now() - t1);
      }
    }),
  );
  const rate = (TENANTS * perClient) / ((performance.now() - t0) / 1000);
  return `${fmt(rate, 0)} writes/s, p50 / p95 ${fmt(median(latencies))} / ${fmt(percentile(latencies, 95))} ms`;
}

export const scaleBench: BenchSection = {
  name: 'scale',
  async run({ scale }) {
    const perTenant = Math.max(2000, Math.round(60_000 * scale));
    const half = perTenant / 2;
    const env = { SVC_API_KEYS: keys, SVC_MEMORY_MB: '300' };
    const writer = await spawnServer({ env, timeoutMs: 120_000 });
    const dataDir = writer.dataDir;
    try {
      for (let t = 0; t < TENANTS; t++) {
        for (let i = 0; i < half; i += BATCH) {
          const n = Math.min(BATCH, half - i);
          const nodes = Array.from({ length: n }, (_, k) => ({
            id: `n${i + k}`,
            kind: 'claim',
            statement: `Tenant ${t} statement ${i + k} on series ${(i + k) % 97}`,
          }));
          const edges =
            i === 0
              ? []
              : Array.from({ length: n }, (_, k) => ({ source_id: `n${i + k}`, target_id: `n${(i + k) % i}`, edge_type: 'CAUSES' }));
          await post(writer.base, `k${t}`, { space: `user:${t}`, nodes, edges });
          progress(`scale: tenant ${t}`, i + n, half);
        }
      }
      // Let the search index finish before the restart, so the restart measures the ledger alone.
      await fetch(`${writer.base}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer k0' },
        body: JSON.stringify({ query: 'statement', as_of: 'now' }),
      });
      await writer.stop();

      const t0 = performance.now();
      const server = await spawnServer({ dataDir, env, timeoutMs: 120_000 });
      const started = performance.now() - t0;
      try {
        const rssStart = rssMb(server.child.pid);
        const cold = await firstRead(server.base, 'k0');
        const toFirstAnswer = performance.now() - t0;
        const warm = [];
        for (let r = 0; r < 20; r++) warm.push(await firstRead(server.base, 'k0'));
        const rssOne = rssMb(server.child.pid);
        const colds: number[] = [cold];
        for (let t = 1; t < TENANTS; t++) colds.push(await firstRead(server.base, `k${t}`));
        const rssAll = rssMb(server.child.pid);
        const tight = await parallelWrites(server.base, 'p');
        // The same with a budget that holds every tenant: what the write path costs when the working set fits.
        await server.stop();
        const roomyServer = await spawnServer({ dataDir, env: { ...env, SVC_MEMORY_MB: '2000' }, timeoutMs: 120_000 });
        let roomy: string;
        try {
          for (let t = 0; t < TENANTS; t++) await firstRead(roomyServer.base, `k${t}`);
          roomy = await parallelWrites(roomyServer.base, 'q');
        } finally {
          await roomyServer.stop();
        }
        const total = perTenant * TENANTS;
        return [
          {
            metric: `restart to first answered read, ${TENANTS} × ${perTenant} rows`,
            value: `${fmt(toFirstAnswer / 1000)} s (up in ${fmt(started / 1000)} s)`,
            target: '≤ 3 s',
            met: toFirstAnswer <= 3000,
          },
          {
            metric: 'RSS after start',
            value: `${fmt(rssStart)} MB`,
            target: total >= 600_000 ? '≤ 400 MB' : '',
            met: total >= 600_000 ? rssStart <= 400 : null,
          },
          {
            metric: `first read of a cold ${perTenant}-row tenant (median of ${TENANTS})`,
            value: `${fmt(median(colds))} ms (first ${fmt(cold)} ms)`,
            target: '≤ 1 s',
            met: median(colds) <= 1000,
          },
          { metric: 'read of a warm tenant, median', value: `${fmt(median(warm))} ms`, target: '', met: null },
          { metric: 'RSS with one tenant in use', value: `${fmt(rssOne)} MB`, target: '≤ 500 MB', met: rssOne <= 500 },
          { metric: 'RSS after touching all ten (SVC_MEMORY_MB=300)', value: `${fmt(rssAll)} MB`, target: '', met: null },
          {
            metric: `small writes, ${TENANTS} tenants at once, SVC_MEMORY_MB=300 (1 client each, 1 node + 1 edge)`,
            value: tight,
            target: '',
            met: null,
            note: 'each write to an evicted tenant reloads it',
          },
          {
            metric: `small writes, ${TENANTS} tenants at once, SVC_MEMORY_MB=2000 (all resident)`,
            value: roomy,
            target: '',
            met: null,
          },
        ] satisfies BenchRow[];
      } finally {
        await server.stop();
      }
    } finally {
      await writer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
