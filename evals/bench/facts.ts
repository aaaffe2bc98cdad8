// Evidence chains and fact resolution at scale: a 100k-node graph of average degree 4 (times --scale)
// and a fact with 100 candidate values, measured at the operation handler (runOperation, the single
// entry both doors call: validation, as_of, the walk or the policy, the certificate; no HTTP).
//
// The rows are written in-process through the Ledger API (real Kuzu in a temporary folder, the same
// write path as POST /v1/memories without HTTP), which loads the graph in seconds instead of minutes.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../storage/log/ledger.ts';
import { formatInstant } from '../../storage/time.ts';
import { EDGE_FAMILIES, type EdgeType } from '../../storage/types.ts';
import type { EdgeInput, NodeInput } from '../../storage/log/write-plan.ts';
import type { Context } from '../../tools/context.ts';
import { runOperation } from '../../tools/operation.ts';
import { declareFact } from '../../tools/declare-fact.ts';
import { resolveFact } from '../../tools/resolve-fact.ts';
import { why } from '../../tools/why.ts';
import { fmt, percentile } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';
import { rng } from '../lib/rng.ts';

const TENANT = 'bench';
const CHUNK = 20_000;
const T0 = Date.UTC(2023, 0, 1) * 1000;
const TYPES: EdgeType[] = [...EDGE_FAMILIES.causal, ...EDGE_FAMILIES.argumentative, ...EDGE_FAMILIES.temporal];
const WHY_SAMPLES = 1_000;
const RESOLVE_SAMPLES = 1_000;
const CANDIDATES = 100;
const WARMUP = 100;

interface Samples {
  wall: number[];
  cpu: number[];
}

/**
 * Wall-clock latency per call, and beside it the process CPU time per call: on a shared machine the
 * wall-clock tail mostly measures time spent descheduled, which the CPU time leaves out.
 */
async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<Samples> {
  const out: Samples = { wall: [], cpu: [] };
  for (let i = 0; i < n; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn(i);
    out.wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    out.cpu.push((c.user + c.system) / 1000);
  }
  return out;
}

const row = (metric: string, ms: Samples, target: number | null, note: string): BenchRow => ({
  metric,
  value: `p50 ${fmt(percentile(ms.wall, 50))} ms, p95 ${fmt(percentile(ms.wall, 95))} ms`,
  target: target === null ? '' : `p95 ≤ ${target} ms`,
  met: target === null ? null : percentile(ms.wall, 95) <= target,
  note: `${note}; CPU time per call p50 ${fmt(percentile(ms.cpu, 50))} ms, p95 ${fmt(percentile(ms.cpu, 95))} ms; load average ${fmt(loadavg()[0] ?? 0, 1)}`,
});

export const facts: BenchSection = {
  name: 'facts',
  async run({ scale }) {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-facts-'));
    const ledger = await Ledger.open(dir);
    try {
      const rand = rng(7);
      const n = Math.max(1_000, Math.round(100_000 * scale));
      const edgeCount = n * 2; // each edge adds to two nodes' degree: average degree 4
      const t0 = performance.now();
      for (let i = 0; i < n; i += CHUNK) {
        const nodes: NodeInput[] = [];
        for (let j = i; j < Math.min(n, i + CHUNK); j++)
          nodes.push({ id: `g${j}`, kind: 'claim', statement: `node ${j}`, asserted_at: T0 + j * 1_000_000 });
        await ledger.write(TENANT, { space: 'graph', nodes, edges: [] });
      }
      let halfway = '';
      for (let i = 0; i < edgeCount; i += CHUNK) {
        if (i >= edgeCount / 2 && !halfway) halfway = formatInstant(ledger.now());
        const edges: EdgeInput[] = [];
        for (let j = i; j < Math.min(edgeCount, i + CHUNK); j++) {
          edges.push({
            source_id: `g${Math.floor(rand() * n)}`,
            target_id: `g${Math.floor(rand() * n)}`,
            edge_type: TYPES[j % TYPES.length] ?? 'CAUSES',
            asserted_at: T0 + j * 1_000_000 + 1,
          });
        }
        await ledger.write(TENANT, { space: 'graph', nodes: [], edges });
      }
      const loadS = (performance.now() - t0) / 1000;
      const ctx: Context = { ledger, tenant: TENANT, services: { version: 'bench' } };
      const asOf = formatInstant(ledger.now());
      const chainAt = async (at: string): Promise<number> =>
        ((await runOperation(why, { id: `g${Math.floor(rand() * n)}`, as_of: at, depth: '3' }, ctx)) as { chain: unknown[] }).chain.length;
      await timed(WARMUP, () => chainAt(asOf));
      let reached = 0;
      const whyMs = await timed(WHY_SAMPLES, async () => {
        reached += await chainAt(asOf);
      });
      let reachedPast = 0;
      const whyPastMs = await timed(WHY_SAMPLES, async () => {
        reachedPast += await chainAt(halfway);
      });

      await ledger.write(TENANT, {
        space: 'facts',
        nodes: Array.from({ length: CANDIDATES }, (_, i) => ({
          id: `c${i}`,
          kind: 'factor',
          fact_key: 'bench_rate',
          fact_value: i,
          asserted_at: T0 + i * 86_400_000_000,
        })),
        edges: [],
      });
      await runOperation(declareFact, { fact_key: 'bench_rate' }, ctx);
      const factAsOf = formatInstant(ledger.now());
      const resolveBody = { fact: 'bench_rate', as_of: factAsOf };
      const answer = (await runOperation(resolveFact, resolveBody, ctx)) as { status: string; candidates: unknown[] };
      if (answer.status !== 'answered' || answer.candidates.length !== CANDIDATES) throw new Error('bench fact did not resolve');
      await timed(WARMUP, () => runOperation(resolveFact, resolveBody, ctx));
      const repeatMs = await timed(RESOLVE_SAMPLES, () => runOperation(resolveFact, resolveBody, ctx));
      // A new valid_at is a new ruleset, so each of these records a verdict and waits for its commit.
      const freshMs = await timed(50, (i) =>
        runOperation(
          resolveFact,
          {
            ...resolveBody,
            valid_at: formatInstant(T0 + (CANDIDATES + i) * 86_400_000_000),
          },
          ctx,
        ),
      );
      return [
        {
          metric: 'graph load (Ledger API)',
          value: `${fmt(loadS, 1)} s`,
          target: '',
          met: null,
          note: `${n.toLocaleString('en-US')} nodes, ${edgeCount.toLocaleString('en-US')} edges, in-process Ledger.write (no HTTP)`,
        },
        row(
          'why depth 3',
          whyMs,
          10,
          `handler latency, as_of now (nothing masked), ${WHY_SAMPLES} random subjects after ${WARMUP} warm-up calls, ${fmt(reached / WHY_SAMPLES, 1)} links per chain on average`,
        ),
        row(
          'why depth 3, as_of halfway through the edges',
          whyPastMs,
          10,
          `half the edges hidden: the walk runs twice (shown, and everything, for the masked counts); ${fmt(reachedPast / WHY_SAMPLES, 1)} links`,
        ),
        row(
          `resolve, ${CANDIDATES} candidates`,
          repeatMs,
          5,
          'handler latency, after 100 warm-up calls; its verdict already recorded (idempotent: no write)',
        ),
        row(
          `resolve, ${CANDIDATES} candidates, new verdict`,
          freshMs,
          null,
          "handler latency including the verdict's group commit to Kuzu",
        ),
      ];
    } finally {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
