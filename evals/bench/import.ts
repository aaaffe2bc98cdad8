// Bulk import over HTTP (issue 21 item 5): rows written by `POST /v1/memories` in 1,000-row requests (900
// nodes and 100 edges, each request its own space, one key), CLIENTS requests in flight; a request counts
// once answered, i.e. once its rows are durable. Several runs on a fresh server each, the median quoted.
// IMPORT_ROWS (default 300,000, past the write journal's cap), IMPORT_RUNS (default 3) and IMPORT_CLIENTS (default 4) change the load;
// IMPORT_CPU_PROF=<dir> starts the server under `--cpu-prof` (profiles written there when it stops).
import { rmSync } from 'node:fs';
import { cpuSeconds } from '../lib/proc.ts';
import { spawnServer } from '../lib/spawn-server.ts';
import { fmt, median, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

export const IMPORT_REQUEST_ROWS = 1_000;
const EDGES = 100;
const TOPICS = ['billing', 'travel', 'garden', 'music', 'health', 'work', 'family', 'cooking', 'books', 'sport'];

/** One 1,000-row request for space `<prefix><n>`: 900 claims and a causal chain of 100 edges through them. */
export function importRequest(n: number, prefix = 'import:'): unknown {
  const nodes = Array.from({ length: IMPORT_REQUEST_ROWS - EDGES }, (_, i) => ({
    id: `${prefix}${n}:${i}`,
    kind: 'claim',
    statement: `Import ${n} note ${i} about ${TOPICS[(n + i) % TOPICS.length]}: detail ${(n * 31 + i * 7) % 1009}`,
  }));
  const edges = Array.from({ length: EDGES }, (_, i) => ({
    source_id: `${prefix}${n}:${i}`,
    target_id: `${prefix}${n}:${i + 1}`,
    edge_type: 'CAUSES',
  }));
  return { space: `${prefix}${n}`, nodes, edges };
}

export interface ImportFigures {
  rowsPerSecond: number;
  /** Per-request latency, ms (retries after a 503 included). */
  latencies: number[];
  /** Answers 503/429/504 (the server's admission asked the client to come back), each retried after its Retry-After. */
  retries: number;
}

/**
 * Writes `requests` 1,000-row requests with `clients` in flight to the server at `base`, each request's
 * space numbered from `first`; every answer must be 200 with every row accepted.
 */
export async function importOver(
  base: string,
  key: string,
  opts: { requests: number; clients: number; first?: number; prefix?: string; label?: string },
): Promise<ImportFigures> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const first = opts.first ?? 0;
  // Bodies made before the clock starts: the bench measures the server, not JSON.stringify here.
  const bodies = Array.from({ length: opts.requests }, (_, i) => JSON.stringify(importRequest(first + i, opts.prefix)));
  const latencies: number[] = [];
  let retries = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: opts.clients }, async () => {
      for (let i = next++; i < opts.requests; i = next++) {
        const t = performance.now();
        let r = await fetch(`${base}/v1/memories`, { method: 'POST', headers, body: bodies[i] });
        let text = await r.text();
        // A bulk import client honours the admission's answer (503/429, or 504 when its turn did not come
        // before the deadline, nothing written): it waits Retry-After seconds and sends again.
        for (let tries = 0; (r.status === 503 || r.status === 429 || r.status === 504) && tries < 20; tries++) {
          retries++;
          await new Promise((res) => setTimeout(res, Number(r.headers.get('retry-after') ?? '1') * 1000));
          r = await fetch(`${base}/v1/memories`, { method: 'POST', headers, body: bodies[i] });
          text = await r.text();
        }
        if (r.status !== 200) throw new Error(`import: ${r.status} ${text.slice(0, 300)}`);
        const answer = JSON.parse(text) as { accepted: number };
        if (answer.accepted !== IMPORT_REQUEST_ROWS) throw new Error(`import: ${answer.accepted} of ${IMPORT_REQUEST_ROWS} rows accepted`);
        latencies.push(performance.now() - t);
        if (i % 20 === 0) progress(opts.label ?? 'import: requests', i, opts.requests);
      }
    }),
  );
  return { rowsPerSecond: (opts.requests * IMPORT_REQUEST_ROWS) / ((performance.now() - t0) / 1000), latencies, retries };
}

const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}: expected a positive whole number, got "${raw}"`);
  return n;
};

export const importBench: BenchSection = {
  name: 'import',
  async run() {
    const rows = int('IMPORT_ROWS', 300_000);
    const runs = int('IMPORT_RUNS', 3);
    const clients = int('IMPORT_CLIENTS', 4);
    const requests = Math.ceil(rows / IMPORT_REQUEST_ROWS);
    const prof = process.env.IMPORT_CPU_PROF;
    const rates: number[] = [];
    const latencies: number[] = [];
    const cpu: number[] = [];
    let retries = 0;
    for (let run = 0; run < runs; run++) {
      const server = await spawnServer({
        env: { SVC_API_KEYS: 'kimport=importer', ...(prof ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${prof}` } : {}) },
        timeoutMs: 120_000,
      });
      try {
        const cpu0 = cpuSeconds(server.child.pid);
        const f = await importOver(server.base, 'kimport', { requests, clients, label: `import run ${run + 1}/${runs}` });
        cpu.push(((cpuSeconds(server.child.pid) - cpu0) * 1000) / requests);
        rates.push(f.rowsPerSecond);
        latencies.push(...f.latencies);
        retries += f.retries;
      } finally {
        await server.stop(30_000);
        rmSync(server.dataDir, { recursive: true, force: true });
      }
    }
    const rate = median(rates);
    return [
      {
        metric: `import, ${requests} requests of ${IMPORT_REQUEST_ROWS} rows, ${clients} clients (median of ${runs} runs)`,
        value: `${fmt(rate / 1000, 1)}k rows/s`,
        target: '≥ 20k rows/s',
        met: rate >= 20_000,
        note: `runs: ${rates.map((r) => `${fmt(r / 1000, 1)}k`).join(', ')}`,
      },
      {
        metric: 'import request latency p50 / p95',
        value: `${fmt(median(latencies), 0)} / ${fmt(percentile(latencies, 95), 0)} ms`,
        target: '',
        met: null,
      },
      {
        metric: 'server CPU per 1,000-row request until acknowledged (median of runs)',
        value: `${fmt(median(cpu), 0)} ms`,
        target: '',
        met: null,
      },
      { metric: 'requests answered 503/429/504 and retried after Retry-After (all runs)', value: String(retries), target: '', met: null },
    ];
  },
};
