// The allocator's settings a server starts with: added when nothing was given (glibc on Linux), kept as
// given otherwise, never added where glibc is not the C library; and a real `serve` runs with them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ALLOCATOR_ENV, allocatorEnv, isGlibc } from './allocator.ts';

const linux = { platform: 'linux' as const, glibc: () => true, canExec: true };

describe('allocatorEnv', () => {
  it('adds both settings when neither was given', () => {
    expect(allocatorEnv({ PATH: '/bin' }, linux)).toEqual({ PATH: '/bin', MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' });
    expect(allocatorEnv({ SVC_ALLOCATOR: 'tuned' }, linux)).toMatchObject(ALLOCATOR_ENV);
  });

  it('keeps what was given around the process, even one of the two', () => {
    expect(allocatorEnv({ MALLOC_ARENA_MAX: '8' }, linux)).toBeNull();
    expect(allocatorEnv({ MALLOC_MMAP_THRESHOLD_: '65536' }, linux)).toBeNull();
    // The process started again has both: it reads no diagnostic report to learn its C library.
    const unasked = { ...linux, glibc: () => expect.unreachable('glibc asked') };
    expect(allocatorEnv({ ...ALLOCATOR_ENV }, unasked)).toBeNull();
  });

  it('starts nothing again with SVC_ALLOCATOR=system, off Linux, without glibc or without execve', () => {
    expect(allocatorEnv({ SVC_ALLOCATOR: 'system' }, linux)).toBeNull();
    expect(allocatorEnv({}, { ...linux, platform: 'darwin' })).toBeNull();
    expect(allocatorEnv({}, { ...linux, glibc: () => false })).toBeNull();
    expect(allocatorEnv({}, { ...linux, canExec: false })).toBeNull();
  });

  it('refuses a value it does not know, naming the setting and the values it takes', () => {
    expect(() => allocatorEnv({ SVC_ALLOCATOR: 'jemalloc' }, linux)).toThrow(
      /SVC_ALLOCATOR: expected "tuned" .* or "system" .*got "jemalloc"/,
    );
  });
});

const ROOT = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'ledger-allocator-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of a `serve` once it listens, read from /proc by its process id (the same after the restart). */
async function servedEnv(extra: Record<string, string>): Promise<Map<string, string>> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_DATA_DIR: join(dir, String(children.length)),
    PORT: '0',
    HOST: '127.0.0.1',
    LANCEDB_LOG: 'error',
    ...extra,
  };
  for (const name of Object.keys(ALLOCATOR_ENV)) delete env[name];
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'memory-ledger.mjs'), 'serve'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolveListening, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on')) resolveListening();
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening:\n${out}`)));
  });
  const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return new Map(environ.filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

const glibc = process.platform === 'linux' && isGlibc();

describe.skipIf(!glibc || typeof process.execve !== 'function')('serve on Linux with glibc', () => {
  it('runs with the settings when none was given, and as given with SVC_ALLOCATOR=system', async () => {
    const tuned = await servedEnv({});
    expect(tuned.get('MALLOC_ARENA_MAX')).toBe('2');
    expect(tuned.get('MALLOC_MMAP_THRESHOLD_')).toBe('131072');
    const system = await servedEnv({ SVC_ALLOCATOR: 'system' });
    expect(system.has('MALLOC_ARENA_MAX')).toBe(false);
    expect(system.get('SVC_ALLOCATOR')).toBe('system');
  }, 60_000);
});
