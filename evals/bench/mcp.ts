// The agent door's cost: MCP tool-call round trips over streamable HTTP against a real server process,
// beside the REST calls for the same input, interleaved so both see the same machine. The MCP calls are
// single JSON-RPC POSTs (the door is stateless), and once more through the SDK's client for the whole
// client-side path. Target: MCP adds under 2 ms at p50.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApp } from '../../server/app.ts';
import { readConfig } from '../../server/config.ts';
import { startServices } from '../../server/services.ts';
import { Ledger } from '../../storage/log/ledger.ts';
import { operations } from '../../tools/index.ts';
import { spawnServer } from '../lib/spawn-server.ts';
import { fmt, percentile, progress } from '../lib/stats.ts';
import type { BenchRow, BenchSection } from './section.ts';

const KEY = 'bench-key';
const WORDS = ['harvest', 'tea', 'coffee', 'rain', 'price', 'drought', 'shipping', 'port', 'demand', 'supply', 'frost', 'yield'];

interface Timed {
  rest: number[];
  mcp: number[];
  sdk: number[];
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/**
 * CPU time per get_memory call through each door, in process (`app.request`, no sockets): what the door
 * itself costs, which the round trips above show multiplied by however loaded the machine is.
 */
async function cpuPerCall(calls: number, kind: 'get' | 'list'): Promise<{ rest: number; mcp: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-mcp-'));
  const config = readConfig({ SVC_DATA_DIR: dir, SVC_API_KEYS: `${KEY}=bench`, SVC_EMBEDDER: 'local', SVC_EXTRACTOR: 'local' });
  const ledger = await Ledger.open(dir);
  const started = await startServices(config, ledger);
  const app = createApp({ config, ledger, services: started.services, checks: started.checks, mount: started.mount });
  const auth = { authorization: `Bearer ${KEY}` };
  try {
    const nodes = Array.from({ length: 200 }, (_, i) => ({ id: `c${i}`, kind: 'claim', statement: `CPU probe ${i}` }));
    await app.request('http://127.0.0.1/v1/memories', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ space: 'user:cpu', nodes }),
    });
    // The list case of the many-agents issue: one user's 50-row space, listed whole.
    const fifty = Array.from({ length: 50 }, (_, i) => ({ id: `l${i}`, kind: 'claim', statement: `Preference ${i} of one user` }));
    await app.request('http://127.0.0.1/v1/memories', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ space: 'user:list', nodes: fifty }),
    });
    const asOf = new Date(Date.now() + 1000).toISOString().slice(0, 10);
    const restUrl = (i: number): string =>
      kind === 'get'
        ? `http://127.0.0.1/v1/memories/c${i % 200}?as_of=${asOf}`
        : `http://127.0.0.1/v1/memories?as_of=${asOf}&space=user:list`;
    const params = (i: number): Record<string, unknown> =>
      kind === 'get'
        ? { name: 'get_memory', arguments: { id: `c${i % 200}`, as_of: asOf } }
        : { name: 'list_memories', arguments: { as_of: asOf, space: 'user:list' } };
    const rest = async (i: number): Promise<void> => {
      const r = await app.request(restUrl(i), { headers: auth });
      if (r.status !== 200) throw new Error(`REST get: ${r.status}`);
      await r.arrayBuffer();
    };
    const viaMcp = async (i: number): Promise<void> => {
      const r = await app.request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: params(i),
        }),
      });
      if (r.status !== 200) throw new Error(`MCP get: ${r.status}`);
      await r.arrayBuffer();
    };
    const cpu = async (fn: (i: number) => Promise<void>): Promise<number> => {
      const before = process.cpuUsage();
      for (let i = 0; i < calls; i++) await fn(i);
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000 / calls;
    };
    for (let i = 0; i < 200; i++) {
      await rest(i);
      await viaMcp(i);
    }
    const samples = { rest: [] as number[], mcp: [] as number[] };
    for (let round = 0; round < 5; round++) {
      samples.rest.push(await cpu(rest));
      samples.mcp.push(await cpu(viaMcp));
    }
    return { rest: percentile(samples.rest, 50), mcp: percentile(samples.mcp, 50) };
  } finally {
    await started.close();
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
        const r = await fetch(`${server.base}/v1/memories`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ space: `user:${i % 5}`, nodes: batch }),
        });
        if (r.status !== 200) throw new Error(`seed write failed: ${r.status} ${await r.text()}`);
      }
      const version = (await (await fetch(`${server.base}/v1/version`)).json()) as { version: string };
      const asOf = new Date(Date.now() + 1000).toISOString().slice(0, 10);
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers: auth } }));

      let rpcId = 0;
      const toolCall = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
        const r = await fetch(`${server.base}/mcp`, {
          method: 'POST',
          headers: {
            ...auth,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } }),
        });
        const text = await r.text();
        const json = JSON.parse(
          text.startsWith('{') ? text : (text.split('\n').find((l) => l.startsWith('data: {')) ?? 'data: {}').slice(6),
        ) as { result?: { structuredContent?: Record<string, unknown>; isError?: boolean } };
        if (!json.result?.structuredContent || json.result.isError) throw new Error(`${name} failed: ${text.slice(0, 300)}`);
        return json.result.structuredContent;
      };

      const measure = async (
        label: string,
        rest: (i: number) => Promise<void>,
        viaMcp: (i: number) => Promise<void>,
        viaSdk: (i: number) => Promise<void>,
      ): Promise<Timed> => {
        const out: Timed = { rest: [], mcp: [], sdk: [] };
        for (let i = 0; i < 30; i++) {
          await rest(i);
          await viaMcp(i);
          await viaSdk(i);
        }
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
        rows.push({
          metric: `${name} REST p50 / p95 (ms)`,
          value: `${fmt(p(t.rest, 50))} / ${fmt(p(t.rest, 95))}`,
          target: '',
          met: null,
          note: `${calls} calls, ${nodes} nodes`,
        });
        rows.push({
          metric: `${name} MCP tool call p50 / p95 (ms)`,
          value: `${fmt(p(t.mcp, 50))} / ${fmt(p(t.mcp, 95))}`,
          target: '',
          met: null,
          note: 'one JSON-RPC POST to /mcp',
        });
        rows.push({
          metric: `${name} MCP via SDK client p50 / p95 (ms)`,
          value: `${fmt(p(t.sdk, 50))} / ${fmt(p(t.sdk, 95))}`,
          target: '',
          met: null,
          note: `@modelcontextprotocol/client, server ${version.version}`,
        });
        const overhead = p(t.mcp, 50) - p(t.rest, 50);
        rows.push({ metric: `${name} MCP overhead at p50 (ms)`, value: fmt(overhead), target: '< 2', met: overhead < 2 });
      };

      const getRest = async (i: number): Promise<void> => {
        const r = await fetch(`${server.base}/v1/memories/m${i % nodes}?as_of=${asOf}`, { headers: auth });
        const body = (await r.json()) as { item?: { id: string } };
        if (body.item?.id !== `m${i % nodes}`) throw new Error('REST get answered the wrong item');
      };
      const getMcp = async (i: number): Promise<void> => {
        const sc = await toolCall('get_memory', { id: `m${i % nodes}`, as_of: asOf });
        if ((sc.item as { id?: string } | null)?.id !== `m${i % nodes}`) throw new Error('MCP get answered the wrong item');
      };
      const getSdk = async (i: number): Promise<void> => {
        const r = await client.callTool({ name: 'get_memory', arguments: { id: `m${i % nodes}`, as_of: asOf } });
        if ((r.structuredContent as { item?: { id: string } }).item?.id !== `m${i % nodes}`)
          throw new Error('SDK get answered the wrong item');
      };
      report('get_memory', await measure('mcp get', getRest, getMcp, getSdk));

      if (operations.some((o) => o.name === 'search_memory')) {
        const query = (i: number): string => `${WORDS[i % WORDS.length]} ${WORDS[(i + 5) % WORDS.length]}`;
        const searchRest = async (i: number): Promise<void> => {
          const r = await fetch(`${server.base}/v1/search`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ query: query(i), as_of: asOf }),
          });
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
        rows.push({
          metric: 'search_memory MCP overhead at p50 (ms)',
          value: 'skipped',
          target: '< 2',
          met: null,
          note: 'no search_memory operation in the registry',
        });
      }
      const load = (await import('node:os')).loadavg()[0] ?? 0;
      rows.push({
        metric: 'load average during the round trips (1 min)',
        value: fmt(load),
        target: '',
        met: null,
        note: 'round trips stretch with load; the CPU rows below do not',
      });
      for (const [kind, name] of [
        ['get', 'get_memory'],
        ['list', 'list_memories (50 rows)'],
      ] as const) {
        const c = await cpuPerCall(Math.max(200, Math.round(400 * scale)), kind);
        rows.push({
          metric: `${name} CPU per call in process, REST / MCP (ms)`,
          value: `${fmt(c.rest, 3)} / ${fmt(c.mcp, 3)}`,
          target: '',
          met: null,
          note: 'app.request, median of 5 rounds',
        });
        rows.push({
          metric: `${name} MCP CPU / REST CPU`,
          value: `${fmt(c.mcp / c.rest, 2)}x`,
          target: '<= 1.5x',
          met: c.mcp / c.rest <= 1.5,
          note: 'issue 26 item 7: tools/call answered without building a server per request',
        });
      }
      return rows;
    } finally {
      await client.close().catch(() => undefined);
      await server.stop();
    }
  },
};
