// A small cluster on one machine: one etcd (loopback, temporary data folder), three `memory-ledger serve`
// processes on 127.0.0.2, .3 and .4, HAProxy with the shipped deploy/haproxy/haproxy.cfg, and the
// placement agent, each a child process whose output goes to a log file in the cluster's folder. Used by
// `npm run test:cluster` and the cluster bench; needs Debian's etcd-server and haproxy on PATH.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Etcd3 } from 'etcd3';
import { runtimeCommand } from '../../server/cluster/haproxy-admin.ts';

const ROOT = resolve(import.meta.dirname, '../..');
export const SERVERS = ['s1', 's2', 's3'] as const;
export type ServerId = (typeof SERVERS)[number];
const ADDRESS: Record<ServerId, string> = { s1: '127.0.0.2', s2: '127.0.0.3', s3: '127.0.0.4' };

/** The servers' operator key (SVC_OPERATOR_KEY): the admin routes and `memory-ledger move` use it. */
export const OPERATOR_KEY = 'operator-key-0123456789abcdef';

export interface Mover {
  child: ChildProcess;
  /** Everything the mover printed so far. */
  output: () => string;
  /** Resolves with the exit code (null when killed by a signal) once it ends. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>;
}

export const keyHash = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** The binaries the cluster needs, or what is missing and how to install it. */
export function missingBinaries(): string | null {
  const missing = ['etcd', 'haproxy'].filter((b) => spawnSync('sh', ['-c', `command -v ${b}`]).status !== 0);
  return missing.length ? `${missing.join(' and ')} not found: apt-get install -y haproxy etcd-server` : null;
}

export async function freePort(host: string): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, host, () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => res(port));
    });
  });
}

export async function until<T>(what: string, ms: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${ms} ms${last ? ` (${(last as Error).message})` : ''}`);
}

export interface Answer {
  status: number;
  server: string | null;
  text: string;
  ms: number;
  headers: Headers;
}

export class Cluster {
  readonly dir: string;
  readonly etcd: Etcd3;
  readonly #etcdUrl: string;
  readonly #children = new Map<string, ChildProcess>();
  readonly #serverPort: number;
  readonly proxyUrl: string;
  readonly #socket: string;
  readonly #maps: string;
  readonly #keysFile: string;
  /** Settings every server starts with beyond the cluster's own (a bench's memory budget). */
  #serverEnv: Record<string, string> = {};

  private constructor(dir: string, etcdUrl: string, serverPort: number, proxyPort: number) {
    this.dir = dir;
    this.#etcdUrl = etcdUrl;
    this.etcd = new Etcd3({ hosts: etcdUrl, defaultCallOptions: (c) => (c.isStream ? {} : { deadline: Date.now() + 5_000 }) });
    this.#serverPort = serverPort;
    this.proxyUrl = `http://127.0.0.1:${proxyPort}`;
    this.#socket = join(dir, 'haproxy-admin.sock');
    this.#maps = join(dir, 'maps');
    this.#keysFile = join(dir, 'keys.json');
  }

  /** Starts etcd, the servers (all keys known to all), HAProxy and the agent; waits until each answers. */
  static async start(keys: Record<string, string>, serverEnv: Record<string, string> = {}): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-cluster-'));
    const [clientPort, peerPort, serverPort, proxyPort] = [
      await freePort('127.0.0.1'),
      await freePort('127.0.0.1'),
      await freePort('127.0.0.2'),
      await freePort('127.0.0.1'),
    ];
    const cluster = new Cluster(dir, `http://127.0.0.1:${clientPort}`, serverPort, proxyPort);
    cluster.#serverEnv = serverEnv;
    writeFileSync(cluster.#keysFile, JSON.stringify(keys));
    mkdirSync(cluster.#maps);
    for (const f of ['keys.map', 'spaces.map']) writeFileSync(join(cluster.#maps, f), '');
    try {
      cluster.#spawn('etcd', 'etcd', [
        '--name=ledger-test',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${cluster.#etcdUrl}`,
        `--advertise-client-urls=${cluster.#etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=ledger-test=http://127.0.0.1:${peerPort}`,
      ]);
      await until('etcd answering', 20_000, async () => (await cluster.etcd.get('/probe').exec()).header !== undefined);
      await Promise.all(SERVERS.map((s) => cluster.startServer(s)));
      cluster.#spawn('haproxy', 'haproxy', ['-db', '-f', join(ROOT, 'deploy/haproxy/haproxy.cfg')], {
        LEDGER_BIND: `127.0.0.1:${proxyPort}`,
        LEDGER_MAPS: cluster.#maps,
        LEDGER_ADMIN_SOCKET: cluster.#socket,
        LEDGER_S1: `${ADDRESS.s1}:${serverPort}`,
        LEDGER_S2: `${ADDRESS.s2}:${serverPort}`,
        LEDGER_S3: `${ADDRESS.s3}:${serverPort}`,
      });
      await until('HAProxy answering', 20_000, async () => (await fetch(`${cluster.proxyUrl}/v1/version`)).ok);
      cluster.#spawn('agent', process.execPath, [join(ROOT, 'bin/memory-ledger.mjs'), 'placement-agent'], {
        SVC_ETCD: cluster.#etcdUrl,
        LEDGER_ADMIN_SOCKET: cluster.#socket,
        LEDGER_MAPS: cluster.#maps,
      });
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  #spawn(name: string, command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
    const out = openSync(join(this.dir, `${name}.log`), 'a');
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', out, out] });
    closeSync(out);
    this.#children.set(name, child);
    return child;
  }

  /** The process id of a child of the cluster (a server, etcd, haproxy, the agent), while it runs. */
  pid(name: string): number | undefined {
    const child = this.#children.get(name);
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  log(name: string): string {
    const path = join(this.dir, `${name}.log`);
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  }

  serverUrl(server: ServerId): string {
    return `http://${ADDRESS[server]}:${this.#serverPort}`;
  }

  async startServer(server: ServerId): Promise<void> {
    this.#spawn(server, process.execPath, [join(ROOT, 'bin/memory-ledger.mjs'), 'serve'], {
      HOST: ADDRESS[server],
      PORT: String(this.#serverPort),
      SVC_DATA_DIR: join(this.dir, `data-${server}`),
      SVC_API_KEYS_FILE: this.#keysFile,
      SVC_SERVER_ID: server,
      SVC_ETCD: this.#etcdUrl,
      SVC_OPERATOR_KEY: OPERATOR_KEY,
      SVC_EMBEDDER: 'local',
      SVC_EXTRACTOR: 'local',
      SVC_KUZU_BUFFER_MB: '64',
      // Short, so the test of an etcd outage sees the bound pass within seconds.
      SVC_ETCD_STALE_MS: '3000',
      ...this.#serverEnv,
    });
    await until(`server ${server} answering`, 90_000, async () => (await fetch(`${this.serverUrl(server)}/v1/version`)).ok);
    // Answering is not serving: until its first read of the placements a server refuses every tenant (503).
    await until(`server ${server} reading the placements`, 60_000, async () => {
      const r = await this.admin(server, 'GET', '/admin/tenants/-/placement');
      return r.status === 200 && (JSON.parse(r.text) as { revision: number }).revision > 0;
    });
  }

  /** `memory-ledger move ARGS` as a child process (so a test can kill it), with etcd and the operator key. */
  move(args: string[]): Mover {
    let output = '';
    const child = spawn(process.execPath, [join(ROOT, 'bin/memory-ledger.mjs'), 'move', ...args], {
      env: { ...process.env, SVC_ETCD: this.#etcdUrl, SVC_OPERATOR_KEY: OPERATOR_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString('utf8')));
    const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((res) =>
      child.once('exit', (code, signal) => res({ code, signal, output })),
    );
    return { child, output: () => output, done };
  }

  /** An operator route of one server, with the operator key. */
  admin(server: ServerId, method: string, path: string, body?: unknown): Promise<Answer> {
    return this.request(method, path, { base: this.serverUrl(server), body, headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
  }

  async placement(tenant: string): Promise<{ server: string; epoch: number; state: string } | null> {
    const text = await this.etcd.get(`/placement/${tenant}`).string();
    return text === null ? null : (JSON.parse(text) as { server: string; epoch: number; state: string });
  }

  /** Sends a signal to one of the cluster's processes (SIGSTOP and SIGCONT make etcd hang and resume). */
  signal(name: ServerId | 'etcd' | 'haproxy' | 'agent', signal: NodeJS.Signals): void {
    this.#children.get(name)?.kill(signal);
  }

  /** SIGKILL, as a machine losing power would; resolves once the process is gone. */
  async kill(server: ServerId): Promise<void> {
    const child = this.#children.get(server);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }

  async place(tenant: string, server: ServerId, epoch: number, state: 'active' | 'frozen' = 'active'): Promise<void> {
    await this.etcd.put(`/placement/${tenant}`).value(JSON.stringify({ server, epoch, state }));
  }

  async registerKey(key: string, tenant: string): Promise<void> {
    await this.etcd.put(`/keys/${keyHash(key)}`).value(tenant);
  }

  /** Entries of one HAProxy map as HAProxy holds it now. */
  async mapEntries(name: 'keys' | 'spaces'): Promise<Map<string, string>> {
    const text = await runtimeCommand(this.#socket, `show map ${join(this.#maps, `${name}.map`)}`);
    const entries = new Map<string, string>();
    for (const line of text.split('\n')) {
      const [, key, value] = line.trim().split(/\s+/);
      if (key && value) entries.set(key, value);
    }
    return entries;
  }

  waitFor<T>(what: string, ms: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
    return until(what, ms, probe);
  }

  /** One HTTP request; `base` defaults to the proxy. */
  async request(
    method: string,
    path: string,
    opts: { key?: string; body?: unknown; base?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const t0 = performance.now();
    const res = await fetch(`${opts.base ?? this.proxyUrl}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, server: res.headers.get('x-ledger-server'), text, ms: performance.now() - t0, headers: res.headers };
  }

  async stop(): Promise<void> {
    const exits: Promise<unknown>[] = [];
    for (const child of this.#children.values()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      exits.push(new Promise((r) => child.once('exit', r)));
      child.kill('SIGTERM');
    }
    const forced = setTimeout(() => {
      for (const child of this.#children.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, 10_000);
    await Promise.all(exits);
    clearTimeout(forced);
    this.etcd.close();
    // CLUSTER_KEEP=1 keeps the folder (data and every process's log) to look at after a failure.
    if (process.env.CLUSTER_KEEP) console.log(`cluster folder kept: ${this.dir}`);
    else rmSync(this.dir, { recursive: true, force: true });
  }
}
