// `npm run eval:mcp-text`: what a model reads from search_memory over MCP, on the LoCoMo replay. Each
// conversation is written turn by turn through REST (as `npm run eval:locomo --mode turns` does), then
// every question is asked through the MCP door (`tools/call search_memory`, limit 10, as of the
// conversation's end), and the answer's text content is measured:
// - its size in tokens (gpt-tokenizer, the cl100k/o200k family's plain BPE), median and p95;
// - whether the evidence survives rendering: the fraction of questions whose evidence turn is among the
//   results in structuredContent, against the fraction whose evidence statement appears in the text
//   content (they must be equal); recall_any@10 on the first ten distinct turns is printed beside them.
// Reads ../shared/data/locomo/locomo10.json at run time (--data PATH; --conversations N for the first N;
// --depth D, default 0: ten results).
import { join } from 'node:path';
import { encode } from 'gpt-tokenizer';
import { loadLocomo } from './lib/locomo-data.ts';
import { conversationEnd, iso, replayTurns, turnStatement } from './lib/locomo-replay.ts';
import { CATEGORY_NAMES } from './lib/locomo-score.ts';
import { PROJECT_ROOT, spawnServer } from './lib/spawn-server.ts';
import { percentile, progress } from './lib/stats.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

interface ToolAnswer {
  text: string;
  turns: string[];
}

async function main(): Promise<void> {
  const path = arg('data') ?? join(PROJECT_ROOT, '..', 'shared', 'data', 'locomo', 'locomo10.json');
  let conversations;
  try {
    conversations = loadLocomo(path);
  } catch (error) {
    console.error(`eval:mcp-text: ${(error as Error).message}`);
    process.exit(2);
  }
  conversations = conversations.slice(0, Number(arg('conversations') ?? conversations.length));
  // depth 0: the ten direct hits alone (the 10-result figure); depth 1 adds each hit's neighbours.
  const depth = Number(arg('depth') ?? 0);
  const keys = conversations.map((c, i) => [`mcp-text-key-${i}`, c.id] as const);
  const server = await spawnServer({ env: { SVC_API_KEYS: keys.map(([k, t]) => `${k}=${t}`).join(',') }, timeoutMs: 600_000 });
  const tokens: number[] = [];
  let asked = 0;
  let inStructured = 0;
  let inText = 0;
  let recall10 = 0;
  let rpc = 0;
  try {
    for (const [i, c] of conversations.entries()) {
      const key = keys[i]![0];
      await replayTurns({ base: server.base, key }, c);
      const statementOf = new Map(c.sessions.flatMap((s) => s.turns.map((t) => [t.id, turnStatement(t)] as const)));
      const ask = async (query: string): Promise<ToolAnswer> => {
        const r = await fetch(`${server.base}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: ++rpc,
            method: 'tools/call',
            params: { name: 'search_memory', arguments: { query, as_of: iso(conversationEnd(c)), limit: 10, depth } },
          }),
        });
        const body = (await r.json()) as {
          result?: {
            content: { type: string; text?: string }[];
            structuredContent?: { results: { node: { payload: { turn?: string } } }[] };
          };
        };
        if (!body.result?.structuredContent) throw new Error(`search_memory failed: ${JSON.stringify(body).slice(0, 300)}`);
        const text = body.result.content.map((b) => b.text ?? '').join('\n');
        const turns: string[] = [];
        for (const x of body.result.structuredContent.results) {
          const t = x.node.payload.turn;
          if (typeof t === 'string' && !turns.includes(t)) turns.push(t);
        }
        return { text, turns };
      };
      const questions = c.questions.filter((q) => q.category in CATEGORY_NAMES && q.evidence.length > 0);
      for (const [n, q] of questions.entries()) {
        const a = await ask(q.question);
        asked++;
        tokens.push(encode(a.text).length);
        if (q.evidence.some((e) => a.turns.includes(e))) inStructured++;
        if (q.evidence.some((e) => a.turns.slice(0, 10).includes(e))) recall10++;
        // The statement as the text renders it: JSON-quoted, whitespace runs folded; its first 200 characters.
        const shown = (e: string): boolean => {
          const s = statementOf.get(e);
          return s !== undefined && a.text.includes(JSON.stringify(s.replace(/\s+/g, ' ')).slice(1, 201));
        };
        if (q.evidence.some(shown)) inText++;
        progress(`conversation ${i + 1}/${conversations.length}`, n + 1, questions.length);
      }
    }
  } finally {
    await server.stop();
  }
  const pct = (n: number): string => `${((100 * n) / Math.max(1, asked)).toFixed(1)}%`;
  console.log(`\nsearch_memory over MCP, LoCoMo ${conversations.length} conversations, ${asked} questions (limit 10, depth ${depth}):`);
  console.log(`| metric | value | target |`);
  console.log(`| - | - | - |`);
  console.log(`| text content tokens, median / p95 | ${percentile(tokens, 50)} / ${percentile(tokens, 95)} | median <= 800 |`);
  console.log(`| evidence among the results (structuredContent) | ${pct(inStructured)} | |`);
  console.log(`| evidence statement in the text content | ${pct(inText)} | equal to the line above |`);
  console.log(`| recall_any@10 (first ten distinct turns) | ${pct(recall10)} | |`);
}

await main();
