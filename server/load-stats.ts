// For diagnosing load only: with SVC_LOAD_STATS=1 the server prints one line every 10 s to stderr,
// `load-stats {...}`: the event loop's delay over the window (p50/p99/max, ms: how long a request that
// arrived then waited before JavaScript saw it, and so the floor under any answer, a refusal included) and
// memory split by where it lives (heap, external, arrayBuffers, and the native rest of RSS: LanceDB's
// and Arrow's buffers, Kuzu's pages, the allocator's slack). The load bench reads these lines.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Services } from '../tools/context.ts';

const MB = 1024 * 1024;
const round = (n: number): number => Math.round(n * 100) / 100;

export function startLoadStats(services: () => Services | undefined, everyMs = 10_000): () => void {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const line = {
      loop_p50_ms: round(delay.percentile(50) / 1e6),
      loop_p99_ms: round(delay.percentile(99) / 1e6),
      loop_max_ms: round(delay.max / 1e6),
      rss_mb: round(m.rss / MB),
      heap_used_mb: round(m.heapUsed / MB),
      heap_total_mb: round(m.heapTotal / MB),
      external_mb: round(m.external / MB),
      array_buffers_mb: round(m.arrayBuffers / MB),
      native_mb: round((m.rss - m.heapTotal - m.external) / MB),
      ...Object.fromEntries(
        Object.entries(services()?.search?.memory() ?? {}).map(([k, v]) => [
          k.endsWith('Items') ? k : `${k}_mb`,
          k.endsWith('Items') ? v : round(v / MB),
        ]),
      ),
      ...services()?.admission?.stats(),
    };
    delay.reset();
    process.stderr.write(`load-stats ${JSON.stringify(line)}\n`);
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}
