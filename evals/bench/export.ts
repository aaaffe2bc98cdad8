// Export at scale: 100k rows (70k nodes, 30k edges, times --scale) loaded over HTTP into a real server
// process in 10,000-row requests, then GET /v1/export streamed by the client: rows per second (wall time
// from request to the last byte) and the server's peak RSS during the export over its RSS just before
// (sampled from /proc every 10 ms). Beside it: the offline reader's load rate and a push into a second
// server (rows per second, one declared batch per write of the source).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { unpackStream } from '../../storage/bundle/archive-files.ts';
import { loadBundleFolder } from '../../storage/bundle/reader.ts';
import { push } from '../../server/sync.ts';
import { cpuSeconds, rssMb } from '../lib/proc.ts';
import { spawnServer, type ServerProcess } from '../lib/spawn-server.ts';
import { fmt, median, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const REQUEST_ROWS = 10_000;
const RUNS = 3;
const T0 = Date.UTC(2023, 0, 1) * 1000;
const iso = (us: number): string =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, '0')}Z`;

async function post(base: string, body: unknown): Promise<void> {
  const r = await fetch(`${base}/v1/memories`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await r.json()) as { refused?: unknown[] };
  if (r.status !== 200 || (json.refused?.length ?? 0) > 0)
    throw new Error(`load failed (${r.status}): ${JSON.stringify(json).slice(0, 300)}`);
}

export async function load(base: string, nodes: number, edges: number): Promise<void> {
  const total = Math.ceil(nodes / REQUEST_ROWS) + Math.ceil(edges / REQUEST_ROWS);
  let done = 0;
  for (let start = 0; start < nodes; start += REQUEST_ROWS) {
    const n = Math.min(REQUEST_ROWS, nodes - start);
    await post(base, {
      space: `user:${(start / REQUEST_ROWS) % 4}`,
      nodes: Array.from({ length: n }, (_, k) => {
        const i = start + k;
        return {
          id: `n${i}`,
          kind: i % 3 ? 'claim' : 'entity',
          category: `topic-${i % 20}`,
          statement: `Statement ${i}: series ${i % 997} moved by ${(i % 89) / 10} points.`,
          payload: { source: `feed-${i % 7}`, n: i },
          asserted_at: iso(T0 + i * 1_000_000),
          ...(i % 50 === 0 ? { fact_key: `f${i % 5}`, fact_value: i } : {}),
        };
      }),
    });
    progress('export bench: load', ++done, total);
  }
  for (let start = 0; start < edges; start += REQUEST_ROWS) {
    const n = Math.min(REQUEST_ROWS, edges - start);
    await post(base, {
      space: 'links',
      edges: Array.from({ length: n }, (_, k) => {
        const i = start + k;
        return {
          source_id: `n${(i * 7919) % nodes}`,
          target_id: `n${(i * 104_729 + 1) % nodes}`,
          edge_type: i % 2 ? 'CAUSES' : 'SUPPORTS',
          lag: i % 3 ? null : 'P3D',
          asserted_at: iso(T0 + i * 1_000_000 + 1),
        };
      }),
    });
    progress('export bench: load', ++done, total);
  }
}

/**
 * Waits until the server has finished what the load left it: the search index caught up (check_install
 * says nothing is queued) and its CPU idle, so the export is measured alone.
 */
export async function quiesce(server: ServerProcess): Promise<boolean> {
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    const r = (await (await fetch(`${server.base}/v1/check_install`)).json()) as { checks?: { name: string; detail: string }[] };
    const index = r.checks?.find((c) => c.name === 'vector_index');
    if (!index || / 0 queued/.test(index.detail)) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  // "Nothing queued" can still leave LanceDB building its indexes for minutes: wait for 2 s of idle CPU.
  for (let last = cpuSeconds(server.child.pid); Date.now() < deadline;) {
    await new Promise((res) => setTimeout(res, 2000));
    const cpu = cpuSeconds(server.child.pid);
    if (cpu - last < 0.1) return true;
    last = cpu;
  }
  return false;
}

interface ExportRun {
  seconds: number;
  cpu: number;
  bytes: number;
  rssBefore: number;
  rssPeak: number;
}

/** One export streamed to the client (and optionally unpacked into `dir`), with the server's RSS sampled. */
async function exportOnce(server: ServerProcess, asOf: string, dir?: string): Promise<ExportRun> {
  const pid = server.child.pid;
  const rssBefore = rssMb(pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, rssMb(pid));
  }, 10);
  const t0 = performance.now();
  const cpu0 = cpuSeconds(pid);
  let bytes = 0;
  try {
    const res = await fetch(`${server.base}/v1/export?as_of=${encodeURIComponent(asOf)}`);
    if (res.status !== 200 || !res.body) throw new Error(`export failed: ${res.status} ${await res.text()}`);
    const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
    if (dir) {
      body.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      await unpackStream(body, dir, 1);
    } else {
      for await (const c of body) bytes += (c as Buffer).length;
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - t0) / 1000;
  rssPeak = Math.max(rssPeak, rssMb(pid));
  return { seconds, cpu: cpuSeconds(pid) - cpu0, bytes, rssBefore, rssPeak };
}

export const exportBench: BenchSection = {
  name: 'export',
  async run({ scale }) {
    const nodes = Math.round(70_000 * scale),
      edges = Math.round(30_000 * scale),
      rows = nodes + edges;
    const server = await spawnServer();
    const target = await spawnServer();
    const work = mkdtempSync(join(tmpdir(), 'ledger-bench-export-'));
    try {
      await load(server.base, nodes, edges);
      const quiet = await quiesce(server);
      const probe = (await (await fetch(`${server.base}/v1/memories?as_of=2100-01-01&limit=1`)).json()) as {
        certificate: { tx_as_of: string };
      };
      const asOf = probe.certificate.tx_as_of;
      const runs: ExportRun[] = [];
      for (let i = 0; i < RUNS; i++) runs.push(await exportOnce(server, asOf, i === 0 ? work : undefined));
      const rate = median(runs.map((r) => rows / r.seconds));
      const growth = Math.max(...runs.map((r) => r.rssPeak - r.rssBefore));
      const t1 = performance.now();
      const bundle = await loadBundleFolder(work);
      const loadSeconds = (performance.now() - t1) / 1000;
      const exported = bundle.view.size().nodes + bundle.view.size().edges;
      if (exported !== rows) throw new Error(`the bundle holds ${exported} rows, expected ${rows}`);
      const t2 = performance.now();
      const report = await push(work, target.base, { diff: true, progress: (l, d, t) => progress(`export bench: ${l}`, d, t ?? d) });
      const pushSeconds = (performance.now() - t2) / 1000;
      if (report.accepted !== rows)
        throw new Error(`push accepted ${report.accepted} of ${rows}: ${JSON.stringify(report.refused.slice(0, 3))}`);
      return [
        {
          metric: `export rows/s (${fmt(rows, 0)} rows, median of ${RUNS}, HTTP)`,
          value: fmt(rate, 0),
          target: '>= 50,000',
          met: rate >= 50_000,
          note: `${(median(runs.map((r) => r.bytes)) / 1e6).toFixed(1)} MB .tar.gz, ${median(runs.map((r) => r.seconds)).toFixed(2)} s`,
        },
        {
          metric: 'export rows per server CPU-second (median)',
          value: fmt(median(runs.map((r) => rows / Math.max(r.cpu, 0.01))), 0),
          target: '',
          met: null,
          note: quiet ? 'the server otherwise idle' : 'the server was still busy indexing for search',
        },
        {
          metric: 'server RSS growth during export (peak - before, MB)',
          value: fmt(growth, 0),
          target: '< 200',
          met: growth < 200,
          note: `RSS before ${fmt(Math.min(...runs.map((r) => r.rssBefore)), 0)} MB, peak ${fmt(Math.max(...runs.map((r) => r.rssPeak)), 0)} MB`,
        },
        {
          metric: 'offline reader load rows/s',
          value: fmt(rows / loadSeconds, 0),
          target: '',
          met: null,
          note: `${loadSeconds.toFixed(2)} s`,
        },
        {
          metric: 'push rows/s into a fresh server',
          value: fmt(rows / pushSeconds, 0),
          target: '',
          met: null,
          note: `${report.requests} requests, ${report.batches} batches`,
        },
      ] satisfies BenchRow[];
    } finally {
      await server.stop();
      await target.stop();
      rmSync(work, { recursive: true, force: true });
      rmSync(server.dataDir, { recursive: true, force: true });
      rmSync(target.dataDir, { recursive: true, force: true });
    }
  },
};
