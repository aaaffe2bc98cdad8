// A folder that cannot be shared: held by another version of memory-ledger, or by a process outside the
// holder protocol that has the graph store open. A second process exits with one line naming the folder
// and the holder, never an engine stack trace.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockName } from '../server/local/lock.ts';
import { SERVICE_VERSION } from '../server/version.ts';
import { Ledger } from '../storage/log/ledger.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'memory-ledger.mjs');
const made: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers) await c();
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'ledger-refuse-'));
  made.push(d);
  return d;
}

async function run(command: string, dataDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, command], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_EMBEDDER: 'local',
      SVC_EXTRACTOR: 'local',
      LANCEDB_LOG: 'error',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  return { code, stdout, stderr };
}

describe('a folder that cannot be shared', () => {
  it('held by another version: stdio and serve exit with one line naming the folder, the pid and the version', async () => {
    const dataDir = folder();
    // Play the other version's holder: its lock, and its record naming a live pid (this test process).
    const lock: Server = createServer((s) => s.destroy());
    await new Promise<void>((r) => lock.listen(lockName(dataDir), () => r()));
    closers.push(() => new Promise((r) => lock.close(() => r())));
    mkdirSync(join(dataDir, 'local'), { mode: 0o700 });
    writeFileSync(
      join(dataDir, 'local', 'holder.json'),
      JSON.stringify({
        protocol: 1,
        pid: process.pid,
        version: '0.3.9',
        kind: 'stdio',
        started_at: new Date().toISOString(),
        socket: join(dataDir, 'local', 'holder.sock'),
        port: null,
      }),
    );
    for (const answer of await Promise.all([run('stdio', dataDir), run('serve', dataDir)])) {
      expect(answer.code).toBe(1);
      expect(answer.stdout).toBe('');
      const lines = answer.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(dataDir);
      expect(lines[0]).toContain(`pid ${process.pid}`);
      expect(lines[0]).toContain('0.3.9');
      expect(lines[0]).toContain(SERVICE_VERSION);
    }
  }, 150_000);

  it('graph store open in a process outside the holder protocol: one line, no engine trace', async () => {
    const dataDir = folder();
    const ledger = await Ledger.open(dataDir);
    closers.push(() => ledger.close());
    const answer = await run('stdio', dataDir);
    expect(answer.code).toBe(1);
    expect(answer.stdout).toBe('');
    const lines = answer.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(dataDir);
    expect(lines[0]).toMatch(/locked by a process outside the holder protocol/);
  }, 150_000);
});
