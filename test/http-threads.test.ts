// `serve` with HTTP threads (SVC_HTTP_THREADS), as a user runs it: the threads bind the port, answer REST
// and MCP operation calls through the ledger's thread, pass the rest on (an export, the MCP handshake,
// the docs), and on SIGTERM stop taking requests while what was acknowledged stays written.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'memory-ledger.mjs');
const dir = mkdtempSync(join(tmpdir(), 'ledger-threads-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function serve(threads: string): Promise<{ child: ChildProcess; base: string; out: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      SVC_DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_API_KEYS: 'ka=alpha,kb=beta',
      SVC_HTTP_THREADS: threads,
      SVC_EMBEDDER: 'local',
      SVC_EXTRACTOR: 'local',
      LANCEDB_LOG: 'error',
    },
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const base = await new Promise<string>((resolveBase, reject) => {
    const look = (): void => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m?.[1]) resolveBase(m[1]);
    };
    child.stdout?.on('data', look);
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening:\n${out}`)));
  });
  return { child, base, out: () => out };
}

const json = (key: string, body?: unknown): RequestInit => ({
  method: body === undefined ? 'GET' : 'POST',
  headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
  body: body === undefined ? undefined : JSON.stringify(body),
});

describe('serve with HTTP threads', () => {
  it('answers both doors through two threads and stops cleanly; a restart finds every acknowledged write', async () => {
    const { child, base, out } = await serve('2');
    expect(out()).toContain('2 HTTP threads');

    const wrote = await fetch(
      `${base}/v1/memories`,
      json('ka', { space: 'user:a', nodes: [{ id: 'tea', kind: 'claim', statement: 'Alice drinks green tea every morning' }] }),
    );
    expect(wrote.status).toBe(200);
    const found = (await (
      await fetch(`${base}/v1/search`, json('ka', { space: 'user:a', query: 'what does Alice drink', as_of: 'now' }))
    ).json()) as { results: { node: { id: string } }[] };
    expect(found.results.map((r) => r.node.id)).toContain('tea');
    const other = await fetch(`${base}/v1/memories?as_of=now`, json('kb'));
    expect(await other.text()).not.toContain('green tea');
    const refused = await fetch(`${base}/v1/search`, json('ka', { space: 'user:a', query: 'tea' }));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: { error: string } }).detail.error).toBe('SVC_AS_OF_REQUIRED');
    expect((await fetch(`${base}/v1/memories?as_of=now`)).headers.get('www-authenticate')).toBe('Bearer');

    // MCP through the SDK's own client: the handshake and the tool list are passed on, the calls answered.
    const client = new Client({ name: 'threads-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: 'Bearer ka' } } }),
    );
    expect((await client.listTools()).tools).toHaveLength(10);
    const remembered = await client.callTool({
      name: 'remember',
      arguments: { space: 'user:a', nodes: [{ id: 'bike', kind: 'claim', statement: 'Alice rides her bike to work' }] },
    });
    expect(remembered.isError).toBeFalsy();
    const listed = await client.callTool({ name: 'list_memories', arguments: { as_of: 'now', space: 'user:a' } });
    const text = (listed.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
    expect(text).toContain('green tea');
    expect(text).toContain('bike');
    await client.close();

    // Passed on whole: a streamed file and a page.
    const exported = await fetch(`${base}/v1/export?as_of=now`, json('ka'));
    expect(exported.headers.get('content-type')).toBe('application/gzip');
    expect([...new Uint8Array(await exported.arrayBuffer()).slice(0, 2)]).toEqual([0x1f, 0x8b]);
    expect((await fetch(`${base}/docs`)).status).toBe(200);

    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const again = await serve('1');
    const after = (await (await fetch(`${again.base}/v1/memories?as_of=now&space=user:a`, json('ka'))).json()) as {
      items: { id: string }[];
    };
    expect(after.items.map((i) => i.id).sort()).toEqual(['bike', 'tea']);
    const stopped = new Promise<number | null>((r) => again.child.once('exit', r));
    again.child.kill('SIGTERM');
    expect(await stopped).toBe(0);
  }, 120_000);

  it('refuses a bad SVC_HTTP_THREADS with one line naming it', async () => {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SVC_DATA_DIR: join(dir, 'bad'), PORT: '0', SVC_HTTP_THREADS: 'two' },
    });
    children.push(child);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).not.toBe(0);
    expect(err).toContain('SVC_HTTP_THREADS: expected a whole number from 0 to 64, got "two"');
  }, 60_000);
});
