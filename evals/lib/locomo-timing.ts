// The per-phase search timings a server started with SVC_SEARCH_TIMING=1 prints (storage/search/timing.ts),
// read back from its log and summarised as p50/p95 per phase, beside the client's HTTP round trip.
import { percentile, table } from './stats.ts';

export type PhaseTimes = Record<string, number>;

/** Every `search-timing {...}` line in `log`, in order. */
export function timingLines(log: string): PhaseTimes[] {
  const out: PhaseTimes[] = [];
  for (const m of log.matchAll(/^search-timing (\{.*\})$/gm)) out.push(JSON.parse(m[1] ?? '{}') as PhaseTimes);
  return out;
}

/** p50 and p95 of each phase over `lines` (a phase missing from a line counts as 0 there). */
export function phaseTable(title: string, lines: readonly PhaseTimes[], http: readonly number[]): string {
  const names = [...new Set(lines.flatMap((l) => Object.keys(l)))].filter((n) => n !== 'present' && n !== 'pool');
  const rows = names.map((n) => {
    const xs = lines.map((l) => l[n] ?? 0);
    return [n, percentile(xs, 50), percentile(xs, 95), xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)];
  });
  rows.push(['http (client)', percentile(http, 50), percentile(http, 95), http.reduce((a, b) => a + b, 0) / Math.max(1, http.length)]);
  return `${title} (${lines.length} searches, ms; concurrent phases overlap)\n${table(['phase', 'p50', 'p95', 'mean'], rows)}`;
}
