// The `memory-ledger` command's front door: help and --version answer without importing Kuzu or LanceDB
// (a resolve hook fails the process if either is imported), a bare call prints help instead of starting
// a server, and a taken port stops `serve` with one line and exit code 1.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'memory-ledger.mjs');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const scratch = mkdtempSync(join(tmpdir(), 'ledger-cli-'));
const NO_ENGINE = join(scratch, 'no-engine.mjs');
writeFileSync(
  NO_ENGINE,
  `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(
  'export async function resolve(s, c, next) { if (/^(kuzu|@lancedb\\\\/)/.test(s)) throw new Error("engine loaded: " + s); return next(s, c); }'));
`,
);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
      cwd: scratch,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`memory-ledger ${args.join(' ')} did not exit: ${stdout}${stderr}`));
    }, 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('help and --version', () => {
  it('prints the version from package.json', async () => {
    const r = await run(['--version'], {}, ['--import', NO_ENGINE]);
    expect(r.stderr).toBe('');
    expect(r).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('answers a bare call with help, and starts nothing', async () => {
    const r = await run([], {}, ['--import', NO_ENGINE]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: memory-ledger <command>/);
    for (const command of ['serve', 'stdio', 'bundle', 'pull', 'push']) expect(r.stdout).toContain(command);
  });

  it.each([
    ['serve', /^usage: memory-ledger serve/],
    ['stdio', /^usage: memory-ledger stdio/],
    ['bundle', /^usage: memory-ledger bundle FILE/],
    ['pull', /^usage: memory-ledger pull BASE_URL DIR/],
    ['push', /memory-ledger push DIR BASE_URL/],
    ['move', /^usage: memory-ledger move TENANT --to SERVER/],
  ])('%s --help prints its help and exits 0 without loading an engine', async (command, usage) => {
    const r = await run([command, '--help'], {}, ['--import', NO_ENGINE]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(usage);
  });

  it('move names what it lacks (a tenant, --to, etcd, the operator key) and exits 2 before reaching anything', async () => {
    const r = await run(['move'], { SVC_ETCD: '', SVC_OPERATOR_KEY: '' });
    expect(r.code).toBe(2);
    for (const what of ['TENANT', '--to', 'SVC_ETCD', 'SVC_OPERATOR_KEY']) expect(r.stderr).toContain(what);
    const bad = await run(['move', 'acme', '--to', 's2', '--page-size', '5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--page-size');
  });

  it('refuses an unknown command with exit code 2', async () => {
    const r = await run(['serv']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "serv"');
  });

  it('the no-engine hook does fail a process that imports an engine', async () => {
    // Without this the help tests above could pass with a hook that never fires.
    const probe = join(scratch, 'probe.mjs');
    writeFileSync(probe, "await import('kuzu');\n");
    const child = spawn(process.execPath, ['--import', NO_ENGINE, probe], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain('engine loaded: kuzu');
  });
});

describe('serve on a taken port', () => {
  it('prints one line naming host:port and what to set, and exits 1', async () => {
    const holder: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    const { port } = holder.address() as AddressInfo;
    try {
      const r = await run(['serve'], { PORT: String(port), HOST: '127.0.0.1', SVC_DATA_DIR: join(scratch, 'data') });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`memory-ledger: 127.0.0.1:${port} is already in use; set PORT (and HOST) to listen elsewhere\n`);
      expect(r.stdout).not.toContain('listening');
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
