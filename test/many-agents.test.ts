// Many local agents, one ledger: real `memory-ledger stdio` processes and one `serve` on one data folder,
// driven by the SDK's stdio client and over HTTP. The first process holds the ledger; the others forward.
// Killing the holder (SIGKILL, mid-write) loses no acknowledged write and the others keep answering; a
// graceful stop hands the folder over the same way.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../evals/lib/spawn-server.ts';
import { stable } from './helpers/mcp-client.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'memory-ledger.mjs');
const SPACE = 'agents';
const dataDir = mkdtempSync(join(tmpdir(), 'ledger-many-'));
const env = { ...getDefaultEnvironment(), SVC_DATA_DIR: dataDir, SVC_TENANT: 'local', SVC_EMBEDDER: 'local', SVC_EXTRACTOR: 'local', LANCEDB_LOG: 'error' };
const later = (): string => new Date(Date.now() + 60_000).toISOString();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Agent { name: string; client: Client; transport: StdioClientTransport; log: () => string }
const agents: Agent[] = [];
let server: ServerProcess | null = null;

afterAll(async () => {
  await Promise.all(agents.map((a) => a.client.close().catch(() => undefined)));
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startAgent(name: string): Promise<Agent> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'stdio'], env, cwd: ROOT, stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (d: Buffer) => { log += d.toString(); });
  const client = new Client({ name, version: '1' });
  await client.connect(transport);
  const agent = { name, client, transport, log: () => log };
  agents.push(agent);
  return agent;
}

const holderPid = (): number => (JSON.parse(readFileSync(join(dataDir, 'local', 'holder.json'), 'utf8')) as { pid: number }).pid;

async function writeMcp(a: Agent, id: string): Promise<boolean> {
  const r = await a.client.callTool({ name: 'remember', arguments: { space: SPACE, nodes: [{ id, kind: 'claim', statement: `${id} was written` }] } });
  return !r.isError;
}

async function writeRest(base: string, id: string): Promise<boolean> {
  const r = await fetch(`${base}/v1/memories`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ space: SPACE, nodes: [{ id, kind: 'claim', statement: `${id} was written` }] }) });
  await r.arrayBuffer();
  return r.ok;
}

async function idsMcp(a: Agent): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const r = await a.client.callTool({ name: 'list_memories', arguments: { as_of: later(), space: SPACE, limit: 1000, ...(cursor ? { cursor } : {}) } });
    expect(r.isError).toBeFalsy();
    const page = r.structuredContent as { items: { id: string }[]; next_cursor: string | null };
    for (const x of page.items) ids.add(x.id);
    cursor = page.next_cursor;
  } while (cursor);
  return ids;
}

async function idsRest(base: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const r = await fetch(`${base}/v1/memories?as_of=${encodeURIComponent(later())}&space=${SPACE}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status).toBe(200);
    const page = (await r.json()) as { items: { id: string }[]; next_cursor: string | null };
    for (const x of page.items) ids.add(x.id);
    cursor = page.next_cursor;
  } while (cursor);
  return ids;
}

const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

describe('many local agents, one ledger', () => {
  it('three stdio processes and one serve share the folder; SIGKILL of the holder mid-write loses no acknowledged write', async () => {
    const first = await startAgent('a');
    expect(first.log()).toMatch(/holds /);
    const [b, c, s] = await Promise.all([startAgent('b'), startAgent('c'), spawnServer({ dataDir, env: { SVC_TENANT: 'local' } })]);
    server = s;
    expect(holderPid()).toBe(first.transport.pid);
    expect(b.log()).toMatch(/forwarding to the holder/);

    // Forwarding cost: the same read through the holder's own stdio and through a forwarder, interleaved.
    await writeMcp(first, 'probe');
    const direct: number[] = [];
    const forwarded: number[] = [];
    const asOf = later();
    const read = async (a: Agent, into: number[]): Promise<unknown> => {
      const t = performance.now();
      const r = await a.client.callTool({ name: 'get_memory', arguments: { id: 'probe', as_of: asOf } });
      into.push(performance.now() - t);
      return stable(r.structuredContent);
    };
    for (let i = 0; i < 20; i++) {
      const [x, y] = [await read(first, direct), await read(b, forwarded)];
      // Same answer both ways (the instant of the answer aside).
      if (i === 0) expect(y).toEqual(x);
    }
    console.log(`get_memory p50: holder ${p50(direct).toFixed(1)} ms, forwarder ${p50(forwarded).toFixed(1)} ms`);

    // Four writers at once, one per process; the holder is killed while they run.
    const acked: string[] = [];
    let running = true;
    let killedAt = 0;
    const firstAfterKill: number[] = [];
    const writer = async (name: string, write: (id: string) => Promise<boolean>): Promise<void> => {
      for (let i = 0; running; i++) {
        const id = `${name}-${i}`;
        let ok = false;
        try { ok = await write(id); } catch { if (name === 'a') return; throw new Error(`${name}: write ${id} failed`); }
        if (ok) acked.push(id);
        if (ok && killedAt && firstAfterKill.length < 1 && name !== 'a') firstAfterKill.push(performance.now() - killedAt);
      }
    };
    const writers = [
      writer('a', (id) => writeMcp(first, id)), writer('b', (id) => writeMcp(b, id)),
      writer('c', (id) => writeMcp(c, id)), writer('s', (id) => writeRest(s.base, id)),
    ];
    await sleep(1500);
    const before = acked.length;
    killedAt = performance.now();
    process.kill(first.transport.pid ?? 0, 'SIGKILL');
    // Keep writing until every survivor has written again after the takeover.
    const deadline = Date.now() + 30_000;
    const since = (p: string): boolean => acked.slice(before).some((id) => id.startsWith(`${p}-`));
    while (!(since('b') && since('c') && since('s')) && Date.now() < deadline) await sleep(100);
    await sleep(500);
    running = false;
    await Promise.all(writers);
    console.log(`acknowledged ${acked.length} writes (${before} before the kill); first write after SIGKILL: ${firstAfterKill[0]?.toFixed(0)} ms`);
    expect(since('b') && since('c') && since('s')).toBe(true);
    expect(holderPid()).not.toBe(first.transport.pid);

    for (const seen of [await idsMcp(b), await idsMcp(c), await idsRest(s.base)]) {
      expect(acked.filter((id) => !seen.has(id))).toEqual([]);
    }
  });

  it('a graceful stop of the holder hands the folder over; a forwarder writes protocol lines only', async () => {
    const survivors = agents.filter((a) => a.name !== 'a');
    const holder = survivors.find((a) => a.transport.pid === holderPid());
    const s = server;
    if (!s) throw new Error('no serve');
    // Whoever holds now is stopped gracefully (a stdio closing its stdin, or serve on SIGTERM).
    if (holder) await holder.client.close();
    else await s.stop();
    const left = survivors.filter((a) => a !== holder);
    for (const a of left) expect(await writeMcp(a, `after-stop-${a.name}`)).toBe(true);
    const seen = await idsMcp(left[0] ?? survivors[0]!);
    for (const a of left) expect(seen.has(`after-stop-${a.name}`)).toBe(true);
    expect(seen.has('b-0') && seen.has('c-0') && seen.has('s-0')).toBe(true);

    // A raw forwarder: stdout must carry nothing but JSON-RPC lines, one per answered request.
    const child = spawn(process.execPath, [BIN, 'stdio'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_memory', arguments: { id: 'b-0', as_of: later() } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    ];
    for (const l of lines) child.stdin.write(`${JSON.stringify(l)}\n`);
    const until = Date.now() + 30_000;
    while (stdout.split('\n').filter((l) => l.trim()).length < 3 && Date.now() < until) await sleep(50);
    child.stdin.end();
    expect(await new Promise<number | null>((r) => child.once('exit', r))).toBe(0);
    expect(stderr).toMatch(/forwarding to the holder/);
    const received = stdout.split('\n').filter((l) => l !== '');
    expect(received.length).toBe(3);
    for (const line of received) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(received.map((l) => (JSON.parse(l) as { id: number }).id).sort()).toEqual([1, 2, 3]);
  });
});
