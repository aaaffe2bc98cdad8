// A data folder whose socket path would not fit a unix socket (107 bytes): the holder answers on loopback
// and every request must carry the per-folder token, kept owner-only in `local/token`.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'memory-ledger.mjs');
const base = mkdtempSync(join(tmpdir(), 'ledger-loop-'));
const dataDir = join(base, 'a-folder-name-long-enough-that-the-socket-path-in-it-would-not-fit', 'x'.repeat(40));
mkdirSync(dataDir, { recursive: true });
const env = {
  ...getDefaultEnvironment(),
  SVC_DATA_DIR: dataDir,
  SVC_TENANT: 'local',
  SVC_EMBEDDER: 'local',
  SVC_EXTRACTOR: 'local',
  LANCEDB_LOG: 'error',
};
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  rmSync(base, { recursive: true, force: true });
});

async function start(): Promise<{ client: Client; log: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'stdio'], env, cwd: ROOT, stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const client = new Client({ name: 'loop', version: '1' });
  await client.connect(transport);
  clients.push(client);
  return { client, log: () => log };
}

describe('a folder too deep for a unix socket', () => {
  it('is shared over loopback with an owner-only token', async () => {
    const holder = await start();
    expect(holder.log()).toMatch(/holds .* on 127\.0\.0\.1:\d+ with the token/);
    const record = JSON.parse(readFileSync(join(dataDir, 'local', 'holder.json'), 'utf8')) as { socket: string | null; port: number };
    expect(record.socket).toBeNull();
    expect(existsSync(join(dataDir, 'local', 'holder.sock'))).toBe(false);
    expect(statSync(join(dataDir, 'local', 'token')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'local')).mode & 0o777).toBe(0o700);
    // Without the token the holder's door answers nothing.
    const refused = await fetch(`http://127.0.0.1:${record.port}/v1/memories?as_of=2030-01-01T00:00:00Z`);
    expect(refused.status).toBe(401);

    const forwarder = await start();
    expect(forwarder.log()).toMatch(/forwarding to the holder/);
    const w = await forwarder.client.callTool({
      name: 'remember',
      arguments: { space: 'deep', nodes: [{ id: 'deep-1', kind: 'claim', statement: 'written through loopback' }] },
    });
    expect(w.isError).toBeFalsy();
    const g = await holder.client.callTool({
      name: 'get_memory',
      arguments: { id: 'deep-1', as_of: new Date(Date.now() + 60_000).toISOString() },
    });
    expect((g.structuredContent as { item: { id: string } | null }).item?.id).toBe('deep-1');
  }, 150_000);
});
