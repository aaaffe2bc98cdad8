// The placement check on a real app (real stores, no etcd: the table is fed by hand as the watcher would):
// both doors, REST and MCP (whole-tenant and keyless `svc:` paths), answer 421 for a tenant placed
// elsewhere and 503 while it is frozen or placements are stale, and serve it when placed here.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hono } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import { Ledger } from '../../storage/log/ledger.ts';
import { createApp } from '../app.ts';
import { readConfig } from '../config.ts';
import { startServices, type StartedServices } from '../services.ts';
import { EPOCH_HEADER, placementGate } from './gate.ts';
import { PlacementTable } from './placement.ts';
import { InFlight, placementStatus } from './placement-route.ts';
import { SERVER_HEADER } from './server-header.ts';

const SVC = 'svc:3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f';
const SVC_ELSEWHERE = 'svc:00000000-1111-4222-8333-444444444444';
const place = (server: string, epoch: number, state = 'active'): string => JSON.stringify({ server, epoch, state });

let dir: string;
let ledger: Ledger;
let started: StartedServices;
let app: Hono<RestEnv>;
let clock = 1_000_000;
const table = new PlacementTable('s1', 10_000);

const initialize = async (path: string, key?: string): Promise<Response> =>
  app.request(`http://ledger.test${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
const list = async (key: string): Promise<Response> =>
  app.request(`http://ledger.test/v1/memories?as_of=2030-01-01T00:00:00Z`, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-gate-'));
  const config = readConfig({
    SVC_DATA_DIR: dir,
    SVC_API_KEYS: 'key-here=here,key-away=away,key-cold=cold,key-free=free',
    SVC_SERVER_ID: 's1',
    SVC_ETCD: 'http://127.0.0.1:2379',
    SVC_OPERATOR_KEY: 'operator-key-0123456789',
  });
  ledger = await Ledger.open(config.dataDir);
  started = await startServices(config, ledger);
  const inFlight = new InFlight();
  const gate = placementGate({ config, table, firstWriterOf: (s) => ledger.firstWriterOf(s), now: () => clock, inFlight });
  app = createApp({
    config,
    ledger,
    services: started.services,
    checks: started.checks,
    mount: started.mount,
    gate,
    placementStatus: (tenant) => placementStatus(tenant, { serverId: 's1', table, inFlight }),
  });
  table.replaceAll(
    1,
    [
      ['here', place('s1', 4)],
      ['away', place('s2', 7)],
      ['cold', place('s1', 2, 'frozen')],
    ],
    [[SVC_ELSEWHERE, 'away']],
  );
  const wrote = await app.request('http://ledger.test/v1/memories', {
    method: 'POST',
    headers: { authorization: 'Bearer key-here', 'content-type': 'application/json' },
    body: JSON.stringify({
      space: SVC,
      nodes: [{ id: 'n1', kind: 'claim', statement: 'placed here', asserted_at: '2024-01-01T00:00:00Z' }],
    }),
  });
  expect(wrote.status).toBe(200);
});

afterAll(async () => {
  await started.close();
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the placement gate', () => {
  it('serves a tenant placed here on both doors, naming the server and the epoch', async () => {
    const r = await list('key-here');
    expect(r.status).toBe(200);
    expect(r.headers.get(SERVER_HEADER)).toBe('s1');
    expect(r.headers.get(EPOCH_HEADER)).toBe('4');
    expect((await initialize('/mcp', 'key-here')).status).toBe(200);
    expect((await initialize(`/mcp/app/${encodeURIComponent(SVC)}`)).status).toBe(200);
  });

  it('answers 421 naming the placed server for a tenant placed elsewhere, on REST and MCP', async () => {
    for (const r of [await list('key-away'), await initialize('/mcp', 'key-away'), await initialize('/apps/x/user%3Aa/mcp', 'key-away')]) {
      expect(r.status).toBe(421);
      const body = (await r.json()) as { detail: { error: string; server: string; epoch: number; why: string } };
      expect(body.detail).toMatchObject({ error: 'misdirected', server: 's2', epoch: 7 });
      expect(body.detail.why).toContain('s2');
      expect(r.headers.get(SERVER_HEADER)).toBe('s1');
    }
  });

  it('routes a keyless svc: path by the space: its local first writer, else the one published in etcd', async () => {
    expect((await initialize(`/mcp/app/${encodeURIComponent(SVC_ELSEWHERE)}`)).status).toBe(421);
    table.setPlacement(2, 'here', place('s3', 5));
    try {
      const r = await initialize(`/mcp/app/${encodeURIComponent(SVC)}`);
      expect(r.status).toBe(421);
      expect(((await r.json()) as { detail: { server: string } }).detail.server).toBe('s3');
    } finally {
      table.setPlacement(3, 'here', place('s1', 6));
    }
    expect((await initialize(`/mcp/app/${encodeURIComponent(SVC)}`)).status).toBe(200);
  });

  it('answers 503 with Retry-After while the tenant is frozen', async () => {
    const r = await list('key-cold');
    expect(r.status).toBe(503);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await r.json()) as { detail: { why: string } }).detail.why).toContain('frozen');
  });

  it('serves unplaced tenants, and leaves open routes and unknown keys to the doors', async () => {
    expect((await list('key-free')).status).toBe(200);
    expect((await list('no-such-key')).status).toBe(401);
    const v = await app.request('http://ledger.test/v1/version');
    expect(v.status).toBe(200);
    expect(v.headers.get(SERVER_HEADER)).toBe('s1');
  });

  it('keeps the last placements while etcd is unreachable for a bounded time, then answers 503', async () => {
    expect(table.unreachable(clock)).toBe(true);
    expect(table.unreachable(clock + 1)).toBe(false);
    try {
      clock += 9_000;
      expect((await list('key-here')).status).toBe(200);
      expect((await list('key-away')).status).toBe(421);
      clock += 2_000;
      for (const key of ['key-here', 'key-away', 'key-free']) {
        const r = await list(key);
        expect(r.status, key).toBe(503);
        expect(((await r.json()) as { detail: { why: string } }).detail.why).toContain('etcd');
      }
    } finally {
      table.reachable();
    }
    expect((await list('key-here')).status).toBe(200);
  });
});

describe('the placement status route for operators', () => {
  const status = (tenant: string, key?: string): Promise<Response> =>
    Promise.resolve(
      app.request(`http://ledger.test/admin/tenants/${tenant}/placement`, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
    );
  it('reports the record this server holds and no request in flight once answers are sent', async () => {
    await list('key-cold');
    await list('key-here');
    const r = await status('cold', 'operator-key-0123456789');
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      tenant: 'cold',
      server: 's1',
      placement: { server: 's1', epoch: 2, state: 'frozen' },
      in_flight: 0,
    });
    expect(await (await status('nobody', 'operator-key-0123456789')).json()).toMatchObject({ placement: null, in_flight: 0 });
  });
  it('refuses a tenant key (403) and no key (401)', async () => {
    expect((await status('here', 'key-here')).status).toBe(403);
    expect((await status('here')).status).toBe(401);
  });
});

describe('PlacementTable', () => {
  it('refuses every tenant until the first read, and a tenant whose record is broken', () => {
    const t = new PlacementTable('a', 1000);
    expect(t.admit('x', 0).kind).toBe('unavailable');
    t.replaceAll(5, [['x', '{"server":"a"}']], []);
    const x = t.admit('x', 0);
    expect(x.kind).toBe('unavailable');
    expect(x.kind === 'unavailable' && x.why).toContain('epoch');
  });
  it('does not let an older full read undo a newer watched change', () => {
    const t = new PlacementTable('a', 1000);
    t.replaceAll(5, [['x', place('a', 1)]], []);
    t.setPlacement(9, 'x', place('b', 2));
    expect(t.replaceAll(8, [['x', place('a', 1)]], [])).toBe(false);
    expect(t.admit('x', 0)).toEqual({ kind: 'elsewhere', server: 'b', epoch: 2 });
    t.setPlacement(10, 'x', null);
    expect(t.admit('x', 0)).toEqual({ kind: 'serve', epoch: null });
  });
});
