// Natural-language writes: the local extractor alone (messages/s in this process), and whole message
// writes through the remember operation (extraction, entity resolution, dedupe and one ledger write per
// request of 100 messages) on real Kuzu in a temporary folder, without HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractLocal } from '../../extract/local.ts';
import { Ledger } from '../../storage/log/ledger.ts';
import { formatInstant } from '../../storage/time.ts';
import type { Context } from '../../tools/context.ts';
import { runOperation } from '../../tools/operation.ts';
import { remember } from '../../tools/remember.ts';
import { fmt, median } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const NAMES = ['Acme Power', 'Dana Whitfield', 'the Bank of England', 'Northwind Labs', 'Maria Lopez', 'Oslo', 'NASA', 'Globex'];
const CLAUSES = [
  'electricity prices rose sharply',
  'demand for air conditioning spiked',
  'the plant was shut for repairs',
  'rates went up again',
  'borrowing fell for the third month',
  'the team missed the deadline',
  'the storm flooded the roads',
  'sales dropped in the north',
  'the union called a strike',
  'shipping costs doubled',
  'the harvest failed',
  'the vote was postponed',
];
const FRAMES = [
  (a: string, b: string) => `${cap(a)} because ${b}.`,
  (a: string, b: string) => `${cap(a)}, so ${b}.`,
  (a: string, b: string) => `${cap(a)} due to the fact that ${b}.`,
  (a: string, b: string) => `Because ${a}, ${b}.`,
  (a: string) => `${cap(a)} and analysts expect more of the same next week.`,
  (a: string) => `I think ${a}.`,
  (a: string, b: string) => `${cap(a)}, which led to a situation where ${b}.`,
  (a: string) => `${cap(a)} yesterday.`,
];
const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** Deterministic chat-like messages of two or three sentences, with names and connectives. */
export function makeMessages(n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const pick = <T>(xs: readonly T[], k: number): T => xs[(i * 7 + k * 13) % xs.length] as T;
    const a = pick(CLAUSES, 1),
      b = pick(CLAUSES, 2),
      c = pick(CLAUSES, 3);
    const f1 = FRAMES[i % FRAMES.length]!,
      f2 = FRAMES[(i + 3) % FRAMES.length]!;
    return `${pick(NAMES, 4)} said ${f1(a, b).charAt(0).toLowerCase()}${f1(a, b).slice(1)} ${f2(c, a)} ${i % 3 === 0 ? `${pick(NAMES, 5)} will review it on Monday.` : ''}`.trim();
  });
}

async function extractionRate(messages: string[]): Promise<number> {
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (const m of messages) extractLocal(m);
    rounds.push(messages.length / ((performance.now() - t0) / 1000));
  }
  return median(rounds);
}

async function writeRate(messages: string[]): Promise<{ rate: number; rows: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-extract-'));
  const ledger = await Ledger.open(dir);
  const ctx: Context = { ledger, tenant: 'bench', services: { version: 'bench' } };
  try {
    const base = Date.UTC(2024, 0, 1) * 1000;
    const t0 = performance.now();
    for (let i = 0; i < messages.length; i += 100) {
      const batch = messages.slice(i, i + 100).map((content, k) => ({
        content,
        observed_at: formatInstant(base + (i + k) * 60_000_000),
        source_description: 'bench chat',
      }));
      await runOperation(remember, { space: `user:${(i / 100) % 4}`, messages: batch }, ctx);
    }
    const seconds = (performance.now() - t0) / 1000;
    const size = (await ledger.load('bench')).size();
    return { rate: messages.length / seconds, rows: size.nodes + size.edges };
  } finally {
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const extract: BenchSection = {
  name: 'extract',
  async run({ scale }) {
    const n = Math.max(500, Math.round(5_000 * scale));
    const messages = makeMessages(n);
    const rate = await extractionRate(messages);
    const write = await writeRate(messages.slice(0, Math.max(500, Math.round(2_000 * scale))));
    const rows: BenchRow[] = [
      {
        metric: `local extraction, ${n} messages (median of 5 rounds)`,
        value: `${fmt(rate, 0)} msg/s`,
        target: '>= 500 msg/s',
        met: rate >= 500,
      },
      {
        metric: 'message writes via remember, 100 msgs/request',
        value: `${fmt(write.rate, 0)} msg/s`,
        target: '',
        met: null,
        note: `${write.rows} node and edge rows written`,
      },
    ];
    return rows;
  },
};
