// What a newcomer meets first: `GET /` leads to the doors (a browser to /ui), and `npm start` stopped by
// the PID it was started with (SIGTERM, SIGINT) really stops the server: no npm-held child left serving.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, PROJECT_ROOT } from '../evals/lib/spawn-server.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('GET /', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_API_KEYS: 'k1=acme' });
    await t.call('POST', '/v1/memories', {
      key: 'k1',
      body: { space: 'user:ada', nodes: [{ id: 'secret', kind: 'claim', statement: 'tenant data' }] },
    });
  });
  afterAll(() => t.close());

  it('sends a browser to the ledger browser', async () => {
    const r = await t.app.request('http://ledger.test/', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/ui');
  });

  it('gives anything else a short index of the doors, open and without tenant data', async () => {
    const r = await t.call('GET', '/');
    expect(r.status).toBe(200);
    expect(r.json.links).toEqual({
      ui: '/ui',
      docs: '/docs',
      openapi: '/v1/openapi.json',
      mcp: '/mcp',
      version: '/v1/version',
      rest: '/v1',
    });
    expect(JSON.stringify(r.json)).not.toMatch(/acme|user:ada|secret/);
  });
});

/** Starts `npm start` as a user would (npm is the process started) and waits until it answers. */
async function npmStart(): Promise<{ pid: number; base: string; exited: Promise<number | null>; dir: string; log: () => string }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ledger-start-'));
  const child = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SVC_DATA_DIR: dir, SVC_EMBEDDER: 'local', SVC_EXTRACTOR: 'local' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, as a shell's job is, so a failed test can still clean up
  });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if ((await fetch(`${base}/v1/version`).catch(() => null))?.ok) return { pid: child.pid ?? 0, base, exited, dir, log: () => log };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`npm start did not answer: ${log}`);
}

async function closedWithin(base: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await fetch(`${base}/v1/version`).catch(() => null)) === null) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

describe('npm start', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops the server when ${signal} is sent to the PID it started as`, async () => {
      const s = await npmStart();
      try {
        process.kill(s.pid, signal);
        expect(await closedWithin(s.base, 30_000), s.log()).toBe(true);
        await Promise.race([s.exited, new Promise((r) => setTimeout(r, 10_000))]);
        expect(s.log()).toMatch(new RegExp(`${signal}: closing`));
      } finally {
        try {
          process.kill(-s.pid, 'SIGKILL'); // whatever the signal left running
        } catch {
          // the group is gone: nothing left
        }
        rmSync(s.dir, { recursive: true, force: true, maxRetries: 5 });
      }
    }, 180_000);
  }
});
