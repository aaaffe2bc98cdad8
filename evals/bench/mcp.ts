// The agent door's cost: MCP tool-call round trips over streamable HTTP against a real server process,
// beside the REST calls for the same input, interleaved so both see the same machine. The MCP calls are
// single JSON-RPC POSTs (the door is stateless), and once more through the SDK's client for the whole
// client-side path. Target: MCP adds under 2 ms at p50.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { operations } from '../../tools/index.ts';
import { spawnServer } from '../lib/spawn-server.ts';
import { fmt, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const KEY = 'bench-key';
const WORDS = ['harvest', 'tea', 'coffee', 'rain', 'price', 'drought', 'shipping', 'port', 'demand', 'supply', 'frost', 'yield'];

interface Timed { rest: number[]; mcp: number[]; sdk: number[] }

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export const mcp: BenchSection = {
  name: 'mcp',
  async run({ scale }) {
    const nodes = Math.max(200, Math.round(2000 * scale));
    const calls = Math.max(100, Math.round(500 * scale));
    const server = await spawnServer({ env: { SVC_API_KEYS: `${KEY}=bench` } });
    const auth = { authorization: `Bearer ${KEY}` };
    const client = new Client({ name: 'bench', version: '1' });
    try {
      for (let i = 0; i < nodes; i += 500) {
        const batch = Array.from({ length: Math.min(500, nodes - i) }, (_, j) => {
          const n = i + j;
          const w = (k: number): string => WORDS[(n * 7 + k * 3) % WORDS.length] ?? 'tea';
          return { id: `m${n}`, kind: 'claim', statement: `Report ${n}: ${w(0)} and ${w(1)} moved ${w(2)} in region ${n % 17}.` };
        });
        const r = await fetch(`${server.base}/v1/memories`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ space: `user:${i % 5}`, nodes: batch }) });
        if (r.status !== 200) throw new Error(`seed write failed: ${r.status} ${await r.text()}`);
      }
      const version = await (await fetch(`${server.base}/v1/version`)).json() as { version: string };
      const asOf = new Date(Date.now() + 1000).toISOString().slice(0, 10);
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers: auth } }));

      let rpcId = 0;
      const toolCall = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
        const r = await fetch(`${server.base}/mcp`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } }),
        });
        const text = await r.text();
        const json = JSON.parse(text.startsWith('{') ? text : (text.split('\n').find((l) => l.startsWith('data: {')) ?? 'data: {}').slice(6)) as { result?: { structuredContent?: Record<string, unknown>; isError?: boolean } };
        if (!json.result?.structuredContent || json.result.isError) throw new Error(`${name} failed: ${text.slice(0, 300)}`);
        return json.result.structuredContent;
      };

      const measure = async (label: string, rest: (i: number) => Promise<void>, viaMcp: (i: number) => Promise<void>, viaSdk: (i: number) => Promise<void>): Promise<Timed> => {
        const out: Timed = { rest: [], mcp: [], sdk: [] };
        for (let i = 0; i < 30; i++) { await rest(i); await viaMcp(i); await viaSdk(i); }
        for (let i = 0; i < calls; i++) {
          out.rest.push(await timed(() => rest(i)));
          out.mcp.push(await timed(() => viaMcp(i)));
          out.sdk.push(await timed(() => viaSdk(i)));
          progress(label, i + 1, calls);
        }
        return out;
      };

      const rows: BenchRow[] = [];
      const report = (name: string, t: Timed): void => {
        const p = (xs: number[], q: number): number => percentile(xs, q);
        rows.push({ metric: `${name} REST p50 / p95 (ms)`, value: `${fmt(p(t.rest, 50))} / ${fmt(p(t.rest, 95))}`, target: '', met: null, note: `${calls} calls, ${nodes} nodes` });
        rows.push({ metric: `${name} MCP tool call p50 / p95 (ms)`, value: `${fmt(p(t.mcp, 50))} / ${fmt(p(t.mcp, 95))}`, target: '', met: null, note: 'one JSON-RPC POST to /mcp' });
        rows.push({ metric: `${name} MCP via SDK client p50 / p95 (ms)`, value: `${fmt(p(t.sdk, 50))} / ${fmt(p(t.sdk, 95))}`, target: '', met: null, note: `@modelcontextprotocol/client, server ${version.version}` });
        const overhead = p(t.mcp, 50) - p(t.rest, 50);
        rows.push({ metric: `${name} MCP overhead at p50 (ms)`, value: fmt(overhead), target: '< 2', met: overhead < 2 });
      };

      const getRest = async (i: number): Promise<void> => {
        const r = await fetch(`${server.base}/v1/memories/m${i % nodes}?as_of=${asOf}`, { headers: auth });
        const body = await r.json() as { item?: { id: string } };
        if (body.item?.id !== `m${i % nodes}`) throw new Error('REST get answered the wrong item');
      };
      const getMcp = async (i: number): Promise<void> => {
        const sc = await toolCall('get_memory', { id: `m${i % nodes}`, as_of: asOf });
        if ((sc.item as { id?: string } | null)?.id !== `m${i % nodes}`) throw new Error('MCP get answered the wrong item');
      };
      const getSdk = async (i: number): Promise<void> => {
        const r = await client.callTool({ name: 'get_memory', arguments: { id: `m${i % nodes}`, as_of: asOf } });
        if ((r.structuredContent as { item?: { id: string } }).item?.id !== `m${i % nodes}`) throw new Error('SDK get answered the wrong item');
      };
      report('get_memory', await measure('mcp get', getRest, getMcp, getSdk));

      if (operations.some((o) => o.name === 'search_memory')) {
        const query = (i: number): string => `${WORDS[i % WORDS.length]} ${WORDS[(i + 5) % WORDS.length]}`;
        const searchRest = async (i: number): Promise<void> => {
          const r = await fetch(`${server.base}/v1/search`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: query(i), as_of: asOf }) });
          if (r.status !== 200) throw new Error(`REST search failed: ${r.status}`);
          await r.arrayBuffer();
        };
        const searchMcp = async (i: number): Promise<void> => {
          await toolCall('search_memory', { query: query(i), as_of: asOf });
        };
        const searchSdk = async (i: number): Promise<void> => {
          const r = await client.callTool({ name: 'search_memory', arguments: { query: query(i), as_of: asOf } });
          if (r.isError) throw new Error('SDK search failed');
        };
        report('search_memory', await measure('mcp search', searchRest, searchMcp, searchSdk));
      } else {
        rows.push({ metric: 'search_memory MCP overhead at p50 (ms)', value: 'skipped', target: '< 2', met: null, note: 'no search_memory operation in the registry' });
      }
      return rows;
    } finally {
      await client.close().catch(() => undefined);
      await server.stop();
    }
  },
};
