// `memory-ledger stdio`: the real command, spawned and driven by the SDK's stdio client. The same tools as
// the HTTP door, on the data folder, open single-tenant (SVC_TENANT); stdout carries nothing but protocol.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { operations } from '../tools/index.ts';

// The end of today (UTC) is after every write these tests make.
const TODAY = new Date().toISOString().slice(0, 10);
const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'memory-ledger.mjs');
const dataDir = mkdtempSync(join(tmpdir(), 'ledger-stdio-'));
// A key map in the environment must not matter: stdio is the open, single-tenant door.
const env = {
  ...getDefaultEnvironment(),
  SVC_DATA_DIR: dataDir,
  SVC_TENANT: 'desk',
  SVC_API_KEYS: 'unused-key=elsewhere',
  SVC_EMBEDDER: 'local',
  SVC_EXTRACTOR: 'local',
};

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function connect(): Promise<{ client: Client; stderr: () => string; errors: Error[] }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'stdio'], env, cwd: ROOT, stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const errors: Error[] = [];
  const client = new Client({ name: 'ledger-stdio-test', version: '1' });
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, stderr: () => log, errors };
}

describe('memory-ledger stdio', () => {
  it('serves every registered operation as a tool, on the data folder, in the SVC_TENANT tenant', async () => {
    const { client, stderr, errors } = await connect();
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toEqual(operations.map((o) => o.name));
      const w = await client.callTool({
        name: 'remember',
        arguments: { space: 'user:desk', nodes: [{ id: 'd1', kind: 'claim', statement: 'Standing desk arrives on Friday' }] },
      });
      expect(w.isError).toBeFalsy();
      expect(w.structuredContent).toMatchObject({ accepted: 1, ids: ['d1'] });
      const g = await client.callTool({ name: 'get_memory', arguments: { id: 'd1', as_of: TODAY } });
      expect((g.structuredContent as { item: { tenant: string; space: string } }).item).toMatchObject({
        id: 'd1',
        tenant: 'desk',
        space: 'user:desk',
      });
      const missing = await client.callTool({ name: 'list_memories', arguments: {} });
      expect(missing.isError).toBe(true);
      expect((missing._meta?.['memory-ledger/error'] as { error: string }).error).toBe('SVC_AS_OF_REQUIRED');
      const x = await client.callTool({ name: 'export_ledger', arguments: { as_of: TODAY } });
      const resource = (x.content as { type: string; resource?: { mimeType?: string; blob?: string } }[]).find(
        (c) => c.type === 'resource',
      )?.resource;
      expect(resource?.mimeType).toBe('application/gzip');
      expect(gunzipSync(Buffer.from(resource?.blob ?? '', 'base64')).toString('latin1')).toContain('Standing desk arrives on Friday');
      expect(stderr()).toMatch(/serving MCP over stdio/);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('closes cleanly when the client goes, so the next session reads what the last one wrote', async () => {
    const { client, errors } = await connect();
    try {
      const l = await client.callTool({ name: 'list_memories', arguments: { as_of: TODAY } });
      expect((l.structuredContent as { items: { id: string }[] }).items.map((x) => x.id)).toEqual(['d1']);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('writes nothing but JSON-RPC lines on stdout', async () => {
    const child = spawn(process.execPath, [BIN, 'stdio'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new PassThrough();
    child.stdout.pipe(out);
    let stdout = '';
    out.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const lines = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_memory', arguments: { query: 'desk', as_of: TODAY } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_memory', arguments: { id: 'd1', as_of: TODAY } } },
    ];
    for (const l of lines) child.stdin.write(`${JSON.stringify(l)}\n`);
    const deadline = Date.now() + 30_000;
    // Calls run concurrently, so answers may come in any order: wait for all three.
    while (stdout.split('\n').filter((l) => l.trim()).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(0);
    const received = stdout.split('\n').filter((l) => l.trim() !== '');
    expect(received.length).toBe(3);
    for (const line of received) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(received.map((l) => (JSON.parse(l) as { id: number }).id).sort()).toEqual([1, 2, 3]);
  });
});
