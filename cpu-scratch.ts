import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from './server/app.ts';
import { readConfig } from './server/config.ts';
import { startServices } from './server/services.ts';
import { Ledger } from './storage/ledger.ts';
const KEY='k';
const dir = mkdtempSync(join(tmpdir(), 'ledger-cpu-'));
const config = readConfig({ SVC_DATA_DIR: dir, SVC_API_KEYS: `${KEY}=bench`, SVC_EMBEDDER: 'local', SVC_EXTRACTOR: 'local' });
const ledger = await Ledger.open(dir);
const started = await startServices(config, ledger);
const app = createApp({ config, ledger, services: started.services, checks: started.checks, mount: started.mount });
const auth = { authorization: `Bearer ${KEY}` };
const nodes = Array.from({ length: 50 }, (_, i) => ({ id: `c${i}`, kind: 'claim', statement: `User preference number ${i} about tea and coffee` }));
await app.request('http://127.0.0.1/v1/memories', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ space: 'user:cpu', nodes }) });
const mode = process.argv[2] ?? 'list';
const rest = async (i: number) => {
  const url = mode === 'list' ? `http://127.0.0.1/v1/memories?as_of=now&space=user:cpu` : `http://127.0.0.1/v1/memories/c${i % 50}?as_of=now`;
  const r = await app.request(url, { headers: auth }); if (r.status !== 200) throw new Error('rest'); await r.arrayBuffer();
};
const mcp = async (i: number, method = 'tools/call') => {
  const params = mode === 'list' ? { name: 'list_memories', arguments: { as_of: 'now', space: 'user:cpu' } } : { name: 'get_memory', arguments: { id: `c${i % 50}`, as_of: 'now' } };
  const r = await app.request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: i, method, params: method === 'tools/call' ? params : {} }) });
  if (r.status !== 200) throw new Error('mcp ' + r.status); await r.arrayBuffer();
};
const cpu = async (fn: (i: number) => Promise<void>, n = 500) => { const b = process.cpuUsage(); for (let i = 0; i < n; i++) await fn(i); const u = process.cpuUsage(b); return (u.user + u.system) / 1000 / n; };
for (let i = 0; i < 300; i++) { await rest(i); await mcp(i); }
const s = { rest: [] as number[], mcp: [] as number[], ping: [] as number[], list: [] as number[] };
for (let r = 0; r < 5; r++) { s.rest.push(await cpu(rest)); s.mcp.push(await cpu(mcp)); s.ping.push(await cpu((i) => mcp(i, 'ping'))); s.list.push(await cpu((i) => mcp(i, 'tools/list'))); }
const med = (xs: number[]) => xs.sort((a, b) => a - b)[2]!.toFixed(3);
console.log(mode, 'REST', med(s.rest), 'MCP call', med(s.mcp), 'ping', med(s.ping), 'tools/list', med(s.list));
if (process.argv[3] === 'prof') { const { Session } = await import('node:inspector/promises'); const ss = new Session(); ss.connect(); await ss.post('Profiler.enable'); await ss.post('Profiler.start'); for (let i = 0; i < 2000; i++) await mcp(i); const { profile } = await ss.post('Profiler.stop') as any; (await import('node:fs')).writeFileSync('/tmp/h24-mcp.cpuprofile', JSON.stringify(profile)); }
await started.close(); await ledger.close(); process.exit(0);
