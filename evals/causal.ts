// `npm run eval:causal [-- --split dev|train] [--extractor local|openai:<model>] [--out FILE] [--misses N]`
// Scores causal-link extraction on the Causal News Corpus (CC0), read at run time from
// ../shared/data/causalnews (never copied into the repository):
//   subtask 1: is a sentence causal (the extractor argues at least one link): accuracy and F1;
//   subtask 2: cause/effect spans: a hit is an extracted causal edge whose cause and effect statements
//   each overlap a gold relation's spans with token F1 >= 0.5 (one gold relation per edge at most).
// The extractor runs in-process on each sentence, as the server runs it on a message.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createExtractor } from '../extract/create.ts';
import type { Extraction } from '../extract/types.ts';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const split = opt('--split') ?? 'dev';
const outFile = opt('--out');
const showMisses = Number(opt('--misses') ?? '0');
const here = dirname(fileURLToPath(import.meta.url));
const dataDir = resolve(opt('--data') ?? join(here, '..', '..', 'shared', 'data', 'causalnews'));

if (!existsSync(dataDir)) {
  console.error(
    `eval:causal: the Causal News Corpus is not at ${dataDir}.\n` +
      'It is read at run time from ../shared/data/causalnews (tanfiona/CausalNewsCorpus data/V2, CC0); pass --data DIR to point elsewhere.',
  );
  process.exit(2);
}

/** RFC 4180 CSV: quoted fields may hold commas, doubled quotes and newlines. */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const src = text.replace(/^\uFEFF/, '');
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (quoted) {
      if (c === '"' && src[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && src[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  const [header, ...body] = rows.filter((r) => r.length > 1 || r[0] !== '');
  return body.map((r) => Object.fromEntries((header ?? []).map((h, i) => [h, r[i] ?? ''])));
}

function readSplit(name: string): Record<string, string>[] | null {
  const file = join(dataDir, `${name}.csv`);
  return existsSync(file) ? parseCsv(readFileSync(file, 'utf8')) : null;
}

const tokens = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export function tokenF1(a: string, b: string): number {
  const ta = tokens(a);
  const tb = tokens(b);
  if (ta.length === 0 || tb.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const t of tb) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of ta) {
    const n = counts.get(t) ?? 0;
    if (n > 0) {
      common++;
      counts.set(t, n - 1);
    }
  }
  if (common === 0) return 0;
  const p = common / ta.length;
  const r = common / tb.length;
  return (2 * p * r) / (p + r);
}

interface Gold {
  cause: string;
  effect: string;
}

function goldOf(marked: string): Gold | null {
  const clean = marked.replace(/<\/?SIG\d*>/g, '');
  const cause = /<ARG0>([\s\S]*?)<\/ARG0>/.exec(clean)?.[1];
  const effect = /<ARG1>([\s\S]*?)<\/ARG1>/.exec(clean)?.[1];
  if (cause === undefined || effect === undefined) return null;
  const strip = (s: string) => s.replace(/<\/?ARG\d>/g, '').trim();
  return { cause: strip(cause), effect: strip(effect) };
}

const f1 = (p: number, r: number): number => (p + r === 0 ? 0 : (2 * p * r) / (p + r));
const round = (x: number): number => Math.round(x * 10_000) / 10_000;

const { extractor } = await createExtractor({
  extractor: opt('--extractor') ?? 'local',
  openaiBaseUrl: process.env.OPENAI_BASE_URL,
  openaiApiKey: process.env.OPENAI_API_KEY,
});
const cache = new Map<string, Extraction>();
async function extract(text: string): Promise<Extraction> {
  let x = cache.get(text);
  if (!x) {
    try {
      x = await extractor.extract({ content: text, observedAt: 0, knownEntities: new Set() });
    } catch {
      x = { blocks: [], entities: [], links: [] };
    }
    cache.set(text, x);
  }
  return x;
}

const causalEdges = (x: Extraction): Gold[] =>
  x.links.map((l) => ({ cause: x.blocks[l.cause]?.statement ?? '', effect: x.blocks[l.effect]?.statement ?? '' }));

const t0 = performance.now();
const result: { subtask1?: Record<string, number>; subtask2: Record<string, number> } = { subtask2: {} };

const st1 = readSplit(`${split}_subtask1`);
if (st1) {
  let tp = 0,
    fp = 0,
    fn = 0,
    tn = 0;
  for (const row of st1) {
    const gold = row.label === '1';
    const said = causalEdges(await extract(row.text ?? '')).length > 0;
    if (gold && said) tp++;
    else if (!gold && said) fp++;
    else if (gold) fn++;
    else tn++;
  }
  const p = tp + fp === 0 ? 0 : tp / (tp + fp);
  const r = tp + fn === 0 ? 0 : tp / (tp + fn);
  result.subtask1 = { n: st1.length, accuracy: round((tp + tn) / st1.length), precision: round(p), recall: round(r), f1: round(f1(p, r)) };
} else console.error(`eval:causal: no ${split}_subtask1.csv, subtask 1 skipped`);

const st2 = readSplit(`${split}_subtask2`);
if (!st2) {
  console.error(`eval:causal: ${join(dataDir, `${split}_subtask2.csv`)} is missing`);
  process.exit(2);
}
const bySentence = new Map<string, Gold[]>();
for (const row of st2) {
  const g = goldOf(row.text_w_pairs ?? '');
  if (!g || row.pair_label === '0') continue;
  const list = bySentence.get(row.text ?? '') ?? [];
  list.push(g);
  bySentence.set(row.text ?? '', list);
}
let hits = 0,
  predicted = 0,
  goldCount = 0;
const misses: string[] = [];
for (const [text, golds] of bySentence) {
  goldCount += golds.length;
  const edges = causalEdges(await extract(text));
  predicted += edges.length;
  const used = new Set<number>();
  for (const e of edges) {
    const j = golds.findIndex((g, k) => !used.has(k) && tokenF1(e.cause, g.cause) >= 0.5 && tokenF1(e.effect, g.effect) >= 0.5);
    if (j >= 0) {
      used.add(j);
      hits++;
    }
  }
  if (used.size < golds.length && misses.length < showMisses) {
    misses.push(
      `${text}\n  gold: ${golds.map((g) => `[${g.cause}] => [${g.effect}]`).join(' | ')}\n  got:  ${edges.map((g) => `[${g.cause}] => [${g.effect}]`).join(' | ') || '(none)'}`,
    );
  }
}
const precision = predicted === 0 ? 0 : hits / predicted;
const recall = goldCount === 0 ? 0 : hits / goldCount;
result.subtask2 = {
  sentences: bySentence.size,
  relations: goldCount,
  predicted,
  hits,
  precision: round(precision),
  recall: round(recall),
  f1: round(f1(precision, recall)),
};

for (const m of misses) console.log(`${m}\n`);
console.log(
  `eval:causal — Causal News Corpus ${split} split, extractor ${extractor.id}, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);
if (result.subtask1) {
  const s = result.subtask1;
  console.log(`  subtask 1 (causal sentence, n=${s.n}): accuracy ${s.accuracy}  precision ${s.precision}  recall ${s.recall}  F1 ${s.f1}`);
}
const s2 = result.subtask2;
console.log(
  `  subtask 2 (cause/effect spans, ${s2.sentences} sentences, ${s2.relations} relations): predicted ${s2.predicted}, hits ${s2.hits}  precision ${s2.precision}  recall ${s2.recall}  F1 ${s2.f1}`,
);
if (outFile) {
  const out = {
    subtask1: result.subtask1 ? { accuracy: result.subtask1.accuracy, f1: result.subtask1.f1 } : null,
    subtask2: { precision: s2.precision, recall: s2.recall, f1: s2.f1 },
  };
  writeFileSync(outFile, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`  written to ${outFile}`);
}
