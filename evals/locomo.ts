// `npm run eval:locomo`: replays the LoCoMo conversations through a real server (one tenant per
// conversation), asks the questions of categories 1-4 through POST /v1/search as of the conversation's
// end, and reports retrieval recall, MRR, latency, and leakage (evidence found before it was known).
// Reads ../shared/data/locomo/locomo10.json at run time; options: --mode turns|messages, --out FILE,
// --data PATH, --conversations N, --dump FILE (each question's first ten turns, for error analysis).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadLocomo, type Conversation } from './lib/locomo-data.ts';
import { conversationEnd, replayTurns, searchTurns, type Api } from './lib/locomo-replay.ts';
import { replayMessages, turnsByNode } from './lib/locomo-messages.ts';
import { byCategory, CATEGORY_NAMES, KS, score, type Outcome } from './lib/locomo-score.ts';
import { PROJECT_ROOT, spawnServer } from './lib/spawn-server.ts';
import { percentile, progress, table } from './lib/stats.ts';

const SEARCH_LIMIT = 25;

export type Replayer = (api: Api, c: Conversation) => Promise<number>;
export const MODES: Record<string, Replayer> = { turns: replayTurns, messages: replayMessages };

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

export interface LocomoReport {
  mode: string;
  conversations: number;
  questions: number;
  overall: Record<string, number>;
  by_category: Record<string, Record<string, number>>;
  leakage: number;
  leakage_checked: number;
  search_ms: { p50: number; p95: number };
  replay: { rows: number; seconds: number };
}

export async function runLocomo(conversations: Conversation[], mode: string, replay: Replayer, dumpPath?: string): Promise<LocomoReport> {
  const keys = conversations.map((c, i) => [`locomo-key-${i}`, c.id] as const);
  const server = await spawnServer({ env: { SVC_API_KEYS: keys.map(([k, t]) => `${k}=${t}`).join(',') } });
  const outcomes: Outcome[] = [];
  const latencies: number[] = [];
  let leakage = 0;
  let leakChecked = 0;
  let rows = 0;
  const dump: unknown[] | undefined = dumpPath ? [] : undefined;
  try {
    const t0 = performance.now();
    for (const [i, c] of conversations.entries()) {
      rows += await replay({ base: server.base, key: keys[i]![0] }, c);
      progress('replay', i + 1, conversations.length);
    }
    const replaySeconds = (performance.now() - t0) / 1000;
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
        outcomes.push({ category: q.category, evidence: q.evidence, ranked: r.turns });
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
    const round = (o: Record<string, number>): Record<string, number> => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Number(v.toFixed(4))]));
    const cats = byCategory(outcomes);
    return {
      mode, conversations: conversations.length, questions: outcomes.length, overall: round(score(outcomes)),
      by_category: Object.fromEntries(Object.entries(cats).map(([k, v]) => [k, round(v)])), leakage, leakage_checked: leakChecked,
      search_ms: { p50: Number(percentile(latencies, 50).toFixed(2)), p95: Number(percentile(latencies, 95).toFixed(2)) },
      replay: { rows, seconds: Number(replaySeconds.toFixed(1)) },
    };
  } finally {
    await server.stop();
  }
}

export function printReport(r: LocomoReport): void {
  const metrics = [...KS.flatMap((k) => [`recall_any@${k}`, `recall_all@${k}`]), 'mrr'];
  const rows = [['overall', r.overall] as const, ...Object.entries(r.by_category)].map(([name, s]) => [name, s.n ?? 0, ...metrics.map((m) => s[m] ?? 0)]);
  console.log(`LoCoMo retrieval (${r.mode}): ${r.conversations} conversations, ${r.questions} questions, ${r.replay.rows} rows replayed in ${r.replay.seconds} s`);
  console.log(table(['set', 'n', ...metrics], rows));
  console.log(`leakage: ${r.leakage} of ${r.leakage_checked} questions found evidence before it was known`);
  console.log(`search latency (HTTP round trip): p50 ${r.search_ms.p50} ms, p95 ${r.search_ms.p95} ms`);
}

async function main(): Promise<void> {
  const mode = arg('mode') ?? 'turns';
  const replay = MODES[mode];
  if (!replay) throw new Error(`--mode: expected one of ${Object.keys(MODES).join(', ')}, got ${mode}`);
  const path = arg('data') ?? join(PROJECT_ROOT, '..', 'shared', 'data', 'locomo', 'locomo10.json');
  let conversations = loadLocomo(path);
  const n = arg('conversations');
  if (n !== undefined) conversations = conversations.slice(0, Number(n));
  const report = await runLocomo(conversations, mode, replay, arg('dump'));
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
