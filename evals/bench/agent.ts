// The agent-facing reads at scale (issue "agent-ready"): 100k nodes (times --scale) in ten spaces with
// 100k edges, a fifth of them SUPERSEDES, on a real Ledger in this process. It measures list with and
// without current_only, get, the cost superseded_by adds to a page (the same rows shaped with and without
// it, in one run), and invalidate, each through the operations both doors call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../storage/log/ledger.ts';
import { nodeRow } from '../../storage/read/rows-out.ts';
import type { Context } from '../../tools/context.ts';
import { getMemory } from '../../tools/get-memory.ts';
import { invalidateMemory } from '../../tools/invalidate-memory.ts';
import { listMemories, type ListMemoriesOutput } from '../../tools/list-memories.ts';
import { runOperation } from '../../tools/operation.ts';
import { rng } from '../lib/rng.ts';
import { fmt, median, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const BATCH = 1000;
const READS = 400;

async function timed(samples: number[], f: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await f();
  samples.push(performance.now() - t0);
}

export const agentBench: BenchSection = {
  name: 'agent',
  async run({ scale }) {
    const n = Math.max(2000, Math.round(100_000 * scale));
    const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-agent-'));
    const ledger = await Ledger.open(dir);
    const ctx: Context = { ledger, tenant: 'bench', services: { version: 'bench' } };
    const rand = rng(7);
    try {
      for (let i = 0; i < n; i += BATCH) {
        const nodes = Array.from({ length: Math.min(BATCH, n - i) }, (_, k) => ({
          id: `n${i + k}`,
          kind: k % 3 === 0 ? 'prediction' : 'claim',
          statement: `Statement ${i + k} about series ${Math.floor(rand() * 500)}`,
        }));
        // Each request also links earlier blocks: every fifth edge a successor superseding an older block.
        const edges =
          i === 0
            ? []
            : Array.from({ length: nodes.length }, (_, k) => ({
                source_id: `n${i + k}`,
                target_id: `n${Math.floor(rand() * i)}`,
                edge_type: k % 5 === 0 ? 'SUPERSEDES' : 'CAUSES',
              }));
        await ledger.write('bench', { space: `user:${(i / BATCH) % 10}`, nodes, edges });
        progress('agent: import', i + nodes.length, n);
      }
      const space = 'user:3';
      const list = (extra: Record<string, unknown>): Promise<ListMemoriesOutput> =>
        runOperation(listMemories, { as_of: 'now', space, limit: 100, ...extra }, ctx) as Promise<ListMemoriesOutput>;
      const plain: number[] = [],
        current: number[] = [],
        gets: number[] = [],
        shapedWith: number[] = [],
        shapedWithout: number[] = [];
      for (let r = 0; r < READS; r++) {
        await timed(plain, () => list({}));
        await timed(current, () => list({ current_only: true }));
        await timed(gets, () => runOperation(getMemory, { id: `n${Math.floor(rand() * n)}`, as_of: 'now' }, ctx));
      }
      // The page's rows shaped twice in one run: what superseded_by adds to a read.
      const snap = await ledger.at('bench', { asOf: 'now', space });
      const page = snap.list({ limit: 100 }).items;
      for (let r = 0; r < READS; r++) {
        let t0 = performance.now();
        for (const v of page) nodeRow(v);
        shapedWithout.push(performance.now() - t0);
        t0 = performance.now();
        for (const v of page) snap.row(v);
        shapedWith.push(performance.now() - t0);
      }
      const invalidations: number[] = [];
      for (let r = 0; r < 100; r++) {
        await timed(invalidations, () => runOperation(invalidateMemory, { id: `n${r * 7}`, reason: 'bench' }, ctx));
      }
      const listP95 = percentile(plain, 95),
        currentP95 = percentile(current, 95);
      const overhead = (median(shapedWith) - median(shapedWithout)) / Math.max(median(plain), 1e-9);
      return [
        { metric: `list p95, limit 100, ${n} nodes (p50)`, value: `${fmt(listP95)} ms (${fmt(median(plain))})`, target: '', met: null },
        {
          metric: 'list current_only p95 (p50)',
          value: `${fmt(currentP95)} ms (${fmt(median(current))})`,
          target: '≤ 10 ms',
          met: currentP95 <= 10,
        },
        { metric: 'get p95 (p50)', value: `${fmt(percentile(gets, 95))} ms (${fmt(median(gets))})`, target: '', met: null },
        {
          metric: 'superseded_by on a 100-row page, share of a list',
          value: `${fmt(overhead * 100, 1)}% (${fmt(median(shapedWith) * 1000, 0)} vs ${fmt(median(shapedWithout) * 1000, 0)} µs)`,
          target: '≤ 10%',
          met: overhead <= 0.1,
        },
        {
          metric: 'invalidate p50 (p95)',
          value: `${fmt(median(invalidations))} ms (${fmt(percentile(invalidations, 95))})`,
          target: '≤ 10 ms',
          met: median(invalidations) <= 10,
        },
      ] satisfies BenchRow[];
    } finally {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
