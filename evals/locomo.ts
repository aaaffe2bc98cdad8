// `npm run eval:locomo`: replays the LoCoMo conversations through a real server (one tenant per
// conversation), asks the questions of categories 1-4 through POST /v1/search as of the conversation's
// end, and reports retrieval recall, MRR, latency, and leakage (evidence found before it was known).
// Reads ../shared/data/locomo/locomo10.json at run time; options: --mode turns|messages, --out FILE,
// --data PATH, --conversations N | A-B (first N, or positions A to B), --dump FILE (each question's first
// ten turns, for error analysis), --embedder local|openai:<model>, --ablate a,b (search mechanisms off).
// Protocol: every weight or rule is tuned on conversations 1-5 only; 6-10 are reported as held out.
// While a conversation is replayed, the questions whose evidence is complete are asked after each session
// (as of the present, writes interleaved with searches): that is the live-replay latency.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadLocomo, type Conversation } from './lib/locomo-data.ts';
import { conversationEnd, replayTurns, searchTurns, type AfterSession, type Api } from './lib/locomo-replay.ts';
import { replayMessages, turnsByNode } from './lib/locomo-messages.ts';
import { byCategory, CATEGORY_NAMES, KS, score, type Outcome } from './lib/locomo-score.ts';
import { PROJECT_ROOT, spawnServer } from './lib/spawn-server.ts';
import { fmt, percentile, progress, table } from './lib/stats.ts';
import { phaseTable, timingLines } from './lib/locomo-timing.ts';

const SEARCH_LIMIT = 25;
/** Conversations (1-based positions in locomo10.json) that weights and rules may be tuned on. */
export const TUNE_POSITIONS = [1, 2, 3, 4, 5];
const METRICS = ['recall_any@5', 'recall_any@10', 'recall_any@25', 'recall_all@10', 'mrr'] as const;

export type Replayer = (api: Api, c: Conversation, afterSession?: AfterSession) => Promise<number>;
export const MODES: Record<string, Replayer> = { turns: replayTurns, messages: replayMessages };

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

export interface LocomoReport {
  mode: string;
  embedder: string;
  ablated: string[];
  conversations: number;
  questions: number;
  overall: Record<string, number>;
  /** Conversations 6-10 (those run), never looked at when tuning. */
  heldout: Record<string, number> | null;
  /** Conversations 1-5 (those run). */
  tuning: Record<string, number> | null;
  tuned_on: string[];
  by_category: Record<string, Record<string, number>>;
  leakage: number;
  leakage_checked: number;
  search_ms: { p50: number; p95: number };
  /** Searches asked between the sessions' writes, as of the present, while the replay runs. */
  live_search_ms: { p50: number; p95: number; n: number };
  replay: { rows: number; seconds: number };
}

export interface RunOptions {
  /** 1-based position of each conversation in the data set (held out: not in TUNE_POSITIONS). */
  positions: number[];
  embedder?: string | undefined;
  ablate?: string[] | undefined;
  dumpPath?: string | undefined;
}

const pick = (s: Record<string, number>): Record<string, number> =>
  Object.fromEntries([['n', s.n ?? 0], ...METRICS.map((m) => [m, Number((s[m] ?? 0).toFixed(4))])]);

export async function runLocomo(conversations: Conversation[], mode: string, replay: Replayer, opts: RunOptions): Promise<LocomoReport> {
  const keys = conversations.map((c, i) => [`locomo-key-${i}`, c.id] as const);
  const embedder = opts.embedder ?? 'local';
  const env: Record<string, string> = { SVC_API_KEYS: keys.map(([k, t]) => `${k}=${t}`).join(','), SVC_EMBEDDER: embedder };
  if (opts.ablate && opts.ablate.length > 0) env.SVC_SEARCH_ABLATE = opts.ablate.join(',');
  const server = await spawnServer({ env, timeoutMs: 600_000 });
  const dumpPath = opts.dumpPath;
  const outcomes: (Outcome & { heldout: boolean })[] = [];
  const latencies: number[] = [];
  const live: number[] = [];
  let leakage = 0;
  let leakChecked = 0;
  let rows = 0;
  const dump: unknown[] | undefined = dumpPath ? [] : undefined;
  try {
    const t0 = performance.now();
    for (const [i, c] of conversations.entries()) {
      const api = { base: server.base, key: keys[i]![0] };
      const lastSession = (q: { evidence: string[] }): number => Math.max(...q.evidence.map((e) => Number(/^D(\d+):/.exec(e)?.[1] ?? 0)));
      rows += await replay(api, c, async (s) => {
        for (const q of c.questions) {
          if (!(q.category in CATEGORY_NAMES) || lastSession(q) !== s.index) continue;
          live.push((await searchTurns(api, q.question, Date.now() / 1000, SEARCH_LIMIT, turnsByNode.get(c.id))).ms);
        }
      });
      progress('replay', i + 1, conversations.length);
    }
    const replaySeconds = (performance.now() - t0) / 1000;
    const liveTimings = timingLines(server.log());
    const total = conversations.reduce((n, c) => n + c.questions.filter((q) => q.category in CATEGORY_NAMES).length, 0);
    let done = 0;
    for (const [i, c] of conversations.entries()) {
      const api = { base: server.base, key: keys[i]![0] };
      const end = conversationEnd(c);
      const sessionStart = new Map(c.sessions.map((s) => [s.index, s.start]));
      for (const q of c.questions) {
        if (!(q.category in CATEGORY_NAMES)) continue;
        const r = await searchTurns(api, q.question, end, SEARCH_LIMIT, turnsByNode.get(c.id));
        latencies.push(r.ms);
        outcomes.push({
          category: q.category,
          evidence: q.evidence,
          ranked: r.turns,
          heldout: !TUNE_POSITIONS.includes(opts.positions[i] ?? 0),
        });
        dump?.push({ conversation: c.id, question: q.question, category: q.category, evidence: q.evidence, ranked: r.turns.slice(0, 10) });
        const starts = q.evidence.map((e) => sessionStart.get(Number(/^D(\d+):/.exec(e)?.[1]))).filter((s): s is number => s !== undefined);
        if (starts.length > 0) {
          const before = await searchTurns(api, q.question, Math.min(...starts) - 1, SEARCH_LIMIT, turnsByNode.get(c.id));
          leakChecked++;
          if (before.turns.some((t) => q.evidence.includes(t))) leakage++;
        }
        progress('questions', ++done, total);
      }
    }
    if (dumpPath && dump) writeFileSync(dumpPath, `${JSON.stringify(dump)}\n`);
    if (liveTimings.length > 0) {
      console.log(phaseTable('live-replay search phases', liveTimings, live));
      console.log(
        phaseTable('after-replay search phases (leakage checks included)', timingLines(server.log()).slice(liveTimings.length), latencies),
      );
    }
    const round = (o: Record<string, number>): Record<string, number> =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Number(v.toFixed(4))]));
    const cats = byCategory(outcomes);
    const held = outcomes.filter((o) => o.heldout);
    const tuning = outcomes.filter((o) => !o.heldout);
    return {
      mode,
      embedder,
      ablated: opts.ablate ?? [],
      conversations: conversations.length,
      questions: outcomes.length,
      overall: round(score(outcomes)),
      heldout: held.length > 0 ? pick(score(held)) : null,
      tuning: tuning.length > 0 ? pick(score(tuning)) : null,
      tuned_on: conversations.filter((_, i) => TUNE_POSITIONS.includes(opts.positions[i] ?? 0)).map((c) => c.id),
      by_category: Object.fromEntries(Object.entries(cats).map(([k, v]) => [k, round(v)])),
      leakage,
      leakage_checked: leakChecked,
      search_ms: { p50: Number(percentile(latencies, 50).toFixed(2)), p95: Number(percentile(latencies, 95).toFixed(2)) },
      live_search_ms: { p50: Number(percentile(live, 50).toFixed(2)), p95: Number(percentile(live, 95).toFixed(2)), n: live.length },
      replay: { rows, seconds: Number(replaySeconds.toFixed(1)) },
    };
  } finally {
    await server.stop();
  }
}

export function printReport(r: LocomoReport): void {
  const metrics = [...KS.flatMap((k) => [`recall_any@${k}`, `recall_all@${k}`]), 'mrr'];
  const sets: [string, Record<string, number>][] = [['overall', r.overall]];
  if (r.tuning) sets.push(['tuning (1-5)', r.tuning]);
  if (r.heldout) sets.push(['held-out (6-10)', r.heldout]);
  // Three decimals: at two, a held-out 0.696 prints as 0.70, the target it misses.
  const rows = [...sets, ...Object.entries(r.by_category)].map(([name, s]) => [
    name,
    String(s.n ?? 0),
    ...metrics.map((m) => {
      const v = s[m];
      return v === undefined ? '-' : fmt(v, 3);
    }),
  ]);
  const ablated = r.ablated.length > 0 ? `, without ${r.ablated.join(', ')}` : '';
  console.log(
    `LoCoMo retrieval (${r.mode}, ${r.embedder}${ablated}): ${r.conversations} conversations, ${r.questions} questions, ${r.replay.rows} rows replayed in ${r.replay.seconds} s; tuned on ${r.tuned_on.join(', ') || 'none of them'}`,
  );
  console.log(table(['set', 'n', ...metrics], rows));
  console.log(`leakage: ${r.leakage} of ${r.leakage_checked} questions found evidence before it was known`);
  console.log(`search latency (HTTP round trip, after the replay): p50 ${r.search_ms.p50} ms, p95 ${r.search_ms.p95} ms`);
  console.log(
    `live-replay search latency (${r.live_search_ms.n} searches between writes): p50 ${r.live_search_ms.p50} ms, p95 ${r.live_search_ms.p95} ms`,
  );
}

/** `N` (the first N), `A-B` (positions A to B) or nothing (all), as 1-based positions. */
export function selectPositions(spec: string | undefined, total: number): number[] {
  const all = Array.from({ length: total }, (_, i) => i + 1);
  if (spec === undefined) return all;
  const range = /^(\d+)-(\d+)$/.exec(spec);
  if (range) return all.filter((p) => p >= Number(range[1]) && p <= Number(range[2]));
  if (/^\d+$/.test(spec)) return all.slice(0, Number(spec));
  throw new Error(`--conversations: expected N or A-B, got ${spec}`);
}

async function main(): Promise<void> {
  const mode = arg('mode') ?? 'turns';
  const replay = MODES[mode];
  if (!replay) throw new Error(`--mode: expected one of ${Object.keys(MODES).join(', ')}, got ${mode}`);
  const path = arg('data') ?? join(PROJECT_ROOT, '..', 'shared', 'data', 'locomo', 'locomo10.json');
  const all = loadLocomo(path);
  const positions = selectPositions(arg('conversations'), all.length);
  const conversations = positions.map((p) => all[p - 1]!);
  const ablate = arg('ablate')
    ?.split(',')
    .filter((x) => x !== '');
  const report = await runLocomo(conversations, mode, replay, { positions, embedder: arg('embedder'), ablate, dumpPath: arg('dump') });
  printReport(report);
  const out = arg('out');
  if (out) {
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`wrote ${out}`);
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(`eval:locomo: ${(error as Error).message}`);
    process.exit(1);
  });
}
