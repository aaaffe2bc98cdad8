// Starts the real server (`node bin/memory-ledger.mjs serve`) as a child process on a free port, for
// end-to-end tests, the crash test, evaluations and benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const PROJECT_ROOT = resolve(import.meta.dirname, '..', '..');

export interface ServerProcess {
  base: string;
  dataDir: string;
  child: ChildProcess;
  log(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; how long it took and whether the SIGKILL was needed. */
  stop(graceMs?: number): Promise<{ ms: number; killed: boolean }>;
  kill(): Promise<void>;
}

/**
 * A port nothing listens on: any the system gives, or with BENCH_PORTS=<from>-<to> (a shared machine
 * where each job keeps to its own range) the first free one in that range.
 */
export async function freePort(range = process.env.BENCH_PORTS): Promise<number> {
  const m = range ? /^(\d+)-(\d+)$/.exec(range) : null;
  if (range && !m) throw new Error(`BENCH_PORTS: expected <from>-<to>, got "${range}"`);
  if (m) for (let p = Number(m[1]); p <= Number(m[2]); p++) if (await listens(p)) return p;
  if (m) throw new Error(`BENCH_PORTS: no free port in ${range}`);
  return listenOn(0);
}

const listens = (port: number): Promise<boolean> =>
  listenOn(port).then(
    () => true,
    () => false,
  );

function listenOn(port: number): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(port, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => res(port));
    });
  });
}

/** The build `npm run build` writes, which the image and an installed package run. */
export const BUILT_ENTRY = join(PROJECT_ROOT, 'dist', 'server', 'cli.js');

/**
 * `entry: 'build'` runs dist/ (as the image does) rather than the sources through tsx, whose start-up
 * compiles every module first: a benchmark of start-up measures what a deployment starts.
 */
export async function spawnServer(
  opts: { dataDir?: string; env?: Record<string, string>; timeoutMs?: number; entry?: 'sources' | 'build'; port?: number } = {},
): Promise<ServerProcess> {
  const port = opts.port ?? (await freePort());
  // BENCH_ENTRY=build makes every bench's server the build, as the image runs it.
  const build = (opts.entry ?? (process.env.BENCH_ENTRY === 'build' ? 'build' : 'sources')) === 'build';
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'ledger-proc-'));
  if (build && !existsSync(BUILT_ENTRY)) throw new Error(`${BUILT_ENTRY} is missing: run \`npm run build\` first`);
  const entry = build ? BUILT_ENTRY : join(PROJECT_ROOT, 'bin', 'memory-ledger.mjs');
  const child = spawn(process.execPath, [entry, 'serve'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SVC_DATA_DIR: dataDir,
      SVC_EMBEDDER: 'local',
      SVC_EXTRACTOR: 'local',
      LANCEDB_LOG: 'error',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  // BENCH_SERVER_LOG names a file the server's output is also written to as it comes (diagnosis: the
  // lines a bench does not print, such as SVC_SEARCH_TIMING's).
  const tee = process.env.BENCH_SERVER_LOG ? createWriteStream(process.env.BENCH_SERVER_LOG, { flags: 'a' }) : null;
  const take = (d: Buffer): void => {
    log += d.toString();
    tee?.write(d);
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  // 'close', not 'exit': output can still arrive after the process exits, and a write after end() throws.
  child.once('close', () => tee?.end());
  const base = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`server exited before answering (code ${child.exitCode}, signal ${child.signalCode}):\n${log.slice(-3000)}`);
    try {
      const r = await fetch(`${base}/v1/version`);
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer within ${opts.timeoutMs ?? 60_000} ms:\n${log.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    base,
    dataDir,
    child,
    log: () => log,
    async stop(graceMs = 10_000) {
      if (!running()) return { ms: 0, killed: false };
      const t0 = performance.now();
      let killed = false;
      child.kill('SIGTERM');
      const t = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(t);
      return { ms: performance.now() - t0, killed };
    },
    async kill() {
      if (!running()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
