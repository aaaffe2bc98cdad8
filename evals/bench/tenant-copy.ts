// An exact tenant copy over HTTP through the operator routes (docs/cluster.md): a tenant of 10k and of
// 100k rows (70% nodes, 30% edges, times --scale) loaded into a server process, exported page by page
// (GET /admin/tenants/{t}/rows), imported page by page into a fresh server (POST of the same rows), its
// search index left to catch up, and the digests compared. Rows per second of each step, wall time.
import { rmSync } from 'node:fs';
import { spawnServer, type ServerProcess } from '../lib/spawn-server.ts';
import { fmt, progress } from '../lib/stats.ts';
import { load, quiesce } from './export.ts';
import type { BenchRow, BenchSection } from './section.ts';

const OP = 'bench-operator-key-0123456789';
const PAGE = 5_000;
const TENANT = 'local';

async function admin(server: ServerProcess, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${server.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${OP}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

async function copyOnce(rows: number): Promise<BenchRow[]> {
  const nodes = Math.round(rows * 0.7);
  const edges = rows - nodes;
  const env = { SVC_OPERATOR_KEY: OP };
  const source = await spawnServer({ env });
  const target = await spawnServer({ env });
  try {
    await load(source.base, nodes, edges);
    await quiesce(source);
    const t0 = performance.now();
    const pages: unknown[][] = [];
    let after = 0;
    let exported = 0;
    for (;;) {
      const page = await admin(source, 'GET', `/admin/tenants/${TENANT}/rows?after=${after}&limit=${PAGE}`);
      pages.push(page.rows);
      exported += page.rows.length;
      progress(`tenant-copy ${rows}: export`, exported, rows + 3);
      if (page.next_after === null) break;
      after = page.next_after;
    }
    const exportS = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    let stored = 0;
    for (const page of pages) {
      stored += (await admin(target, 'POST', `/admin/tenants/${TENANT}/rows`, { rows: page })).stored;
      progress(`tenant-copy ${rows}: import`, stored, exported);
    }
    const importS = (performance.now() - t1) / 1000;
    const t2 = performance.now();
    await quiesce(target);
    const indexS = (performance.now() - t2) / 1000;
    const t3 = performance.now();
    const [da, db] = [
      await admin(source, 'GET', `/admin/tenants/${TENANT}/digest`),
      await admin(target, 'GET', `/admin/tenants/${TENANT}/digest`),
    ];
    const digestS = (performance.now() - t3) / 2000;
    if (da.digest !== db.digest || stored !== exported)
      throw new Error(`the copy differs: ${JSON.stringify({ da, db, stored, exported })}`);
    const label = `${fmt(exported, 0)} rows`;
    return [
      {
        metric: `tenant export rows/s (${label}, pages of ${fmt(PAGE, 0)}, HTTP)`,
        value: fmt(exported / exportS, 0),
        target: '',
        met: null,
        note: `${exportS.toFixed(1)} s`,
      },
      {
        metric: `tenant import rows/s (${label}, durable per page)`,
        value: fmt(exported / importS, 0),
        target: '',
        met: null,
        note: `${importS.toFixed(1)} s`,
      },
      {
        metric: `target search index catch-up after import (${label}, s)`,
        value: indexS.toFixed(1),
        target: '',
        met: null,
        note: 'until nothing is queued and the CPU is idle',
      },
      { metric: `tenant digest (${label}, s per server)`, value: digestS.toFixed(2), target: '', met: null, note: 'digests equal' },
    ];
  } finally {
    for (const s of [source, target]) {
      await s.stop();
      rmSync(s.dataDir, { recursive: true, force: true });
    }
  }
}

export const tenantCopyBench: BenchSection = {
  name: 'tenant-copy',
  async run({ scale }) {
    const out: BenchRow[] = [];
    for (const rows of [10_000, 100_000]) out.push(...(await copyOnce(Math.round(rows * scale))));
    return out;
  },
};
