// The steps of `memory-ledger move` against a real etcd and two small stand-in servers that speak the
// operator routes' contract (rows in tseq order, verbatim import, digest, drop, placement view) over HTTP,
// so each failure can be made to happen exactly where wanted: a source gone mid-copy, a digest that
// differs, requests still in flight at the freeze, an interrupted mover, a mover's lock left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { abortMove, MoveError, moveTenant, type MoveOptions } from '../../server/cluster/move.ts';
import { freePort, missingBinaries, until } from './harness.ts';

const KEY = 'op-key';
type Row = { table: string; tseq: number; id: string };

/** A stand-in server: a tenant's rows in memory, writes refused unless placed here and active (as the gate does). */
class FakeServer {
  readonly rows = new Map<string, Row[]>();
  inFlight = 0;
  /** Changes what it stores (a digest must then differ). */
  corrupt = false;
  /** DELETEs of a tenant answered 202 (deletion going on) before one deletes it: a large copy. */
  slowDrops = 0;
  readonly dropCalls = new Map<string, number>();
  server: Server | null = null;
  url = '';
  constructor(
    readonly id: string,
    readonly etcd: Etcd3,
  ) {}

  async start(): Promise<void> {
    const port = await freePort('127.0.0.1');
    this.url = `http://127.0.0.1:${port}`;
    this.server = createServer((req, res) => {
      void this.#handle(req).then(([status, body]) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((r) => this.server?.listen(port, '127.0.0.1', r));
    await this.etcd.put(`/servers/${this.id}`).value(JSON.stringify({ url: this.url }));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
    this.server = null;
  }

  async #placement(tenant: string): Promise<{ record: { server: string; epoch: number; state: string } | null; revision: number }> {
    const res = await this.etcd.get(`/placement/${tenant}`).exec();
    const text = res.kvs[0]?.value.toString('utf8');
    return {
      record: text ? (JSON.parse(text) as { server: string; epoch: number; state: string }) : null,
      revision: Number(res.header.revision),
    };
  }

  /** A tenant write: refused unless placed here and active. */
  async write(tenant: string, id: string): Promise<boolean> {
    const { record } = await this.#placement(tenant);
    if (record && (record.server !== this.id || record.state !== 'active')) return false;
    const rows = this.rows.get(tenant) ?? [];
    rows.push({ table: 'node', tseq: (rows.at(-1)?.tseq ?? 0) + 1, id });
    this.rows.set(tenant, rows);
    return true;
  }

  async #handle(req: IncomingMessage): Promise<[number, unknown]> {
    if (req.headers.authorization !== `Bearer ${KEY}`) return [403, {}];
    const url = new URL(req.url ?? '/', this.url);
    const [, , , tenant = '', what] = url.pathname.split('/');
    const rows = this.rows.get(tenant) ?? [];
    const last = rows.at(-1)?.tseq ?? 0;
    if (req.method === 'GET' && what === 'rows') {
      const after = Number(url.searchParams.get('after'));
      const limit = Number(url.searchParams.get('limit'));
      const page = rows.filter((r) => r.tseq > after).slice(0, limit);
      const more = rows.some((r) => r.tseq > (page.at(-1)?.tseq ?? after) && page.length === limit);
      return [200, { tenant, rows: page, next_after: more ? (page.at(-1)?.tseq ?? null) : null, last_tseq: last }];
    }
    if (req.method === 'POST' && what === 'rows') {
      let text = '';
      for await (const chunk of req) text += String(chunk);
      const incoming = (JSON.parse(text) as { rows: Row[] }).rows;
      let stored = 0;
      let skipped = 0;
      for (const row of incoming) {
        const have = rows.find((r) => r.tseq === row.tseq);
        if (have) {
          if (have.id !== row.id) return [409, { detail: { error: 'conflict' } }];
          skipped++;
        } else {
          rows.push(this.corrupt ? { ...row, id: `${row.id}!` } : row);
          stored++;
        }
      }
      this.rows.set(tenant, rows);
      return [200, { stored, skipped, last_tseq: rows.at(-1)?.tseq ?? 0 }];
    }
    if (req.method === 'GET' && what === 'digest') {
      const upTo = Number(url.searchParams.get('up_to'));
      const after = Number(url.searchParams.get('after') ?? '0');
      const range = rows.filter((r) => r.tseq > after && r.tseq <= upTo);
      return [
        200,
        { tenant, after, up_to: upTo, rows: range.length, digest: createHash('sha256').update(JSON.stringify(range)).digest('hex') },
      ];
    }
    if (req.method === 'GET' && what === 'placement') {
      const { record, revision } = await this.#placement(tenant);
      return [200, { tenant, server: this.id, placement: record, revision, in_flight: this.inFlight }];
    }
    if (req.method === 'DELETE' && what === undefined) {
      const { record } = await this.#placement(tenant);
      if (record?.server === this.id) return [409, { detail: { error: 'conflict', why: 'served here' } }];
      const calls = (this.dropCalls.get(tenant) ?? 0) + 1;
      this.dropCalls.set(tenant, calls);
      if (calls <= this.slowDrops) return [202, { tenant, deleted: calls, done: false }];
      this.rows.delete(tenant);
      return [200, { tenant, deleted: rows.length, done: true }];
    }
    return [404, {}];
  }
}

let dir: string;
let etcdProcess: ChildProcess;
let etcd: Etcd3;
let a: FakeServer;
let b: FakeServer;
const lines: string[] = [];
const opts = (tenant: string, extra: Partial<MoveOptions> = {}): MoveOptions => ({
  etcd,
  operatorKey: KEY,
  tenant,
  to: 'b',
  pageRows: 100,
  tailRows: 50,
  log: (line) => lines.push(line),
  ...extra,
});
const placement = async (tenant: string): Promise<unknown> => JSON.parse((await etcd.get(`/placement/${tenant}`).string()) ?? 'null');
const seed = async (tenant: string, n: number): Promise<void> => {
  await etcd.put(`/placement/${tenant}`).value(JSON.stringify({ server: 'a', epoch: 4, state: 'active' }));
  for (let i = 0; i < n; i++) await a.write(tenant, `${tenant}-${i}`);
};

beforeAll(async () => {
  const missing = missingBinaries();
  if (missing) throw new Error(missing);
  dir = mkdtempSync(join(tmpdir(), 'ledger-move-steps-'));
  const [client, peer] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
  etcdProcess = spawn(
    'etcd',
    [
      '--name=steps',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${client}`,
      `--advertise-client-urls=http://127.0.0.1:${client}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=steps=http://127.0.0.1:${peer}`,
    ],
    { stdio: 'ignore' },
  );
  etcd = new Etcd3({
    hosts: `http://127.0.0.1:${client}`,
    defaultCallOptions: (c) => (c.isStream ? {} : { deadline: Date.now() + 5_000 }),
  });
  await until('etcd answering', 20_000, async () => (await etcd.get('/probe').exec()).header !== undefined);
  a = new FakeServer('a', etcd);
  b = new FakeServer('b', etcd);
  await a.start();
  await b.start();
}, 60_000);

afterAll(async () => {
  await a?.stop().catch(() => undefined);
  await b?.stop().catch(() => undefined);
  etcd?.close();
  etcdProcess?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  lines.length = 0;
  a.corrupt = b.corrupt = false;
  a.slowDrops = b.slowDrops = 0;
});

describe('move, step by step', () => {
  it('copies every row, including those written during the bulk copy, and re-points at epoch+1', async () => {
    await seed('t1', 1_000);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      for (let i = 0; writing && i < 2_000; i++) {
        if (await a.write('t1', `t1-live${i}`)) written++;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const result = await moveTenant(opts('t1'));
    writing = false;
    await writer;
    expect(written).toBeGreaterThan(0);
    expect(result).toMatchObject({ from: 'a', to: 'b', epoch: 5 });
    expect(await placement('t1')).toEqual({ server: 'b', epoch: 5, state: 'active' });
    expect(b.rows.get('t1')?.length).toBe(1_000 + written);
    expect(result.rows).toBe(1_000 + written);
    expect(result.sourceCopy).toEqual({ state: 'deleted', rows: 1_000 + written });
    // The source's copy is dropped once it no longer serves the tenant.
    expect(a.rows.has('t1')).toBe(false);
    expect(lines.join('\n')).toMatch(/bulk pass 1: \d+ rows/);
    expect(lines.join('\n')).toMatch(/writes were frozen for/);
  });

  it("follows a slow deletion of the target's stale copy to its end, and does not wait for the source's", async () => {
    await seed('t1s', 400);
    // A stale copy on the target, deleted only on the third DELETE; the source's never within the move.
    b.rows.set('t1s', [{ table: 'node', tseq: 1, id: 'stale' }]);
    b.slowDrops = 2;
    a.slowDrops = 1_000;
    const result = await moveTenant(opts('t1s'));
    expect(b.dropCalls.get('t1s')).toBe(3);
    expect(b.rows.get('t1s')?.map((r) => r.id)).toEqual(Array.from({ length: 400 }, (_, i) => `t1s-${i}`));
    expect(result.sourceCopy).toEqual({ state: 'deleting', rows: 1 });
    expect(lines.join('\n')).toContain('the copy on a is being deleted there (1 rows so far)');
    expect(await placement('t1s')).toEqual({ server: 'b', epoch: 5, state: 'active' });
  });

  it('waits for the requests the source admitted before the freeze', async () => {
    await seed('t2', 300);
    a.inFlight = 1;
    const move = moveTenant(opts('t2'));
    // The request in flight ends 300 ms after the freeze; the move must not copy the tail before.
    await until('frozen', 10_000, async () => ((await placement('t2')) as { state: string }).state === 'frozen');
    await new Promise((r) => setTimeout(r, 300));
    expect(lines.join('\n')).not.toContain('tail:');
    a.inFlight = 0;
    const result = await move;
    expect(result.quiesceMs).toBeGreaterThanOrEqual(300);
    expect(lines.join('\n')).toContain('finished its 1 request(s) in flight');
  });

  it('gives up and unfreezes when the source keeps requests in flight past the bound', async () => {
    await seed('t3', 300);
    a.inFlight = 2;
    try {
      await expect(moveTenant(opts('t3', { quiesceMs: 300 }))).rejects.toThrow(/still runs 2 request/);
    } finally {
      a.inFlight = 0;
    }
    expect(await placement('t3')).toEqual({ server: 'a', epoch: 4, state: 'active' });
    expect(b.rows.has('t3')).toBe(false);
    expect(await a.write('t3', 'after')).toBe(true);
  });

  it('never freezes when the rows copied while writable differ, and drops the target copy', async () => {
    await seed('t4', 300);
    b.corrupt = true;
    await expect(moveTenant(opts('t4'))).rejects.toThrow(/digests differ up to tseq 300/);
    expect(await placement('t4')).toEqual({ server: 'a', epoch: 4, state: 'active' });
    expect(b.rows.has('t4')).toBe(false);
    expect(lines.join('\n')).not.toContain('frozen at epoch');
  });

  it('unfreezes at the old epoch and drops the target copy when the tail differs', async () => {
    await seed('t4b', 300);
    const move = moveTenant(opts('t4b', { holdFrozenMs: 500 }));
    await until('frozen', 10_000, async () => lines.some((l) => l.includes('source saw the freeze')));
    // A tail row (as if committed just before the freeze), which the target then stores altered.
    a.rows.get('t4b')?.push({ table: 'node', tseq: 301, id: 't4b-tail' });
    b.corrupt = true;
    await expect(move).rejects.toThrow(/digests differ from tseq 300 to 301/);
    expect(await placement('t4b')).toEqual({ server: 'a', epoch: 4, state: 'active' });
    expect(b.rows.has('t4b')).toBe(false);
    expect(lines.join('\n')).toContain('unfrozen on a at epoch 4');
  });

  it('leaves the tenant where it was when the source goes away during the bulk copy', async () => {
    await seed('t5', 3_000);
    const move = moveTenant(opts('t5', { pageRows: 50 }));
    await until('part of the copy on b', 10_000, async () => (b.rows.get('t5')?.length ?? 0) > 0);
    await a.stop();
    try {
      await expect(move).rejects.toThrow();
    } finally {
      await a.start();
    }
    expect(await placement('t5')).toEqual({ server: 'a', epoch: 4, state: 'active' });
    expect(b.rows.has('t5')).toBe(false);
    expect(a.rows.get('t5')?.length).toBe(3_000);
  }, 30_000);

  it('stops cleanly when interrupted, frozen or not', async () => {
    await seed('t6', 300);
    const stop = new AbortController();
    const move = moveTenant(opts('t6', { holdFrozenMs: 10_000, signal: stop.signal }));
    await until('frozen', 10_000, async () => lines.some((l) => l.includes('source saw the freeze')));
    expect(await placement('t6')).toEqual({ server: 'a', epoch: 4, state: 'frozen' });
    stop.abort(new MoveError('interrupted by SIGINT'));
    await expect(move).rejects.toThrow(/SIGINT/);
    expect(await placement('t6')).toEqual({ server: 'a', epoch: 4, state: 'active' });
    expect(b.rows.has('t6')).toBe(false);
  });

  it('refuses a second mover while the first holds the lock, and --abort recovers once the lock lapses', async () => {
    await seed('t7', 100);
    // What a mover killed while frozen leaves: the tenant frozen, a copy on the target, its lock on a lease.
    await etcd.put('/placement/t7').value(JSON.stringify({ server: 'a', epoch: 4, state: 'frozen' }));
    b.rows.set('t7', [{ table: 'node', tseq: 1, id: 't7-0' }]);
    const lease = etcd.lease(1);
    await lease.put('/moves/t7').value('{"mover":"dead"}');
    await expect(moveTenant(opts('t7'))).rejects.toThrow(/another move of t7 is running/);
    await expect(abortMove(opts('t7'))).rejects.toThrow(/another move of t7 is running/);
    lease.release();
    await until('the lock lapsed', 10_000, async () => (await etcd.get('/moves/t7').string()) === null);
    await abortMove(opts('t7'));
    expect(await placement('t7')).toEqual({ server: 'a', epoch: 4, state: 'active' });
    expect(b.rows.has('t7')).toBe(false);
    expect(a.rows.get('t7')?.length).toBe(100);
    // And a move then goes through.
    await moveTenant(opts('t7'));
    expect(await placement('t7')).toEqual({ server: 'b', epoch: 5, state: 'active' });
  }, 30_000);

  it('refuses a move to an unknown server, to where the tenant is, and of an unplaced tenant', async () => {
    await seed('t8', 10);
    await expect(moveTenant(opts('t8', { to: 'zz' }))).rejects.toThrow(/zz is not registered/);
    await expect(moveTenant(opts('t8', { to: 'a' }))).rejects.toThrow(/already placed on a/);
    await expect(moveTenant(opts('nobody'))).rejects.toThrow(/not placed/);
    expect(await etcd.get('/moves/t8').string()).toBeNull();
  });
});
