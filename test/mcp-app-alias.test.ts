// The alias `/apps/<app_label>/<space>/mcp` of the app-scoped door, for clients that rewrite an address
// not ending in /mcp: it must keep every confinement of `/mcp/<app_label>/<space>` (reads, writes and
// the hosted opening rules), and paths under /apps that are not that shape must not open a door at all.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopeOf } from '../server/mcp/scope.ts';
import { formatInstant } from '../storage/time.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { httpClient, listen, restCall } from './helpers/mcp-client.ts';

const KA = 'alias-key-a';
const KB = 'alias-key-b';
const SVC = 'svc:7c0d2a4e-5b6f-4a1b-9c8d-0e1f2a3b4c5d';
const SVC_UNWRITTEN = 'svc:00000000-aaaa-4bbb-8ccc-dddddddddddd';
const alias = (space: string): string => `/apps/alias-app/${encodeURIComponent(space)}/mcp`;

let t: TestApp;
let http: { base: string; close(): Promise<void> };
const now = (): string => formatInstant(t.ledger.now());

async function initializeStatus(path: string, key?: string): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(http.base + path, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function structured(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await client.callTool({ name, arguments: args });
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return r.structuredContent as Record<string, unknown>;
}

const ids = (items: unknown): string[] => (items as { id: string }[]).map((x) => x.id).sort();

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: `${KA}=alpha,${KB}=beta` });
  http = await listen(t);
  const write = async (key: string, body: unknown): Promise<void> => {
    const r = await t.call('POST', '/v1/memories', { body, key });
    expect(r.status).toBe(200);
    expect(r.json.refused).toEqual([]);
  };
  await write(KA, { space: 'user:a', nodes: [{ id: 'a1', kind: 'claim', statement: 'Alias space a holds this' }] });
  await write(KA, { space: 'user:b', nodes: [{ id: 'b1', kind: 'claim', statement: 'Alias space b keeps a secret' }] });
  await write(KA, { space: SVC, nodes: [{ id: 's-alpha', kind: 'claim', statement: 'alpha wrote this svc space first' }] });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await t?.close();
});

describe('scopeOf', () => {
  it('reads the app and the space from both addresses, and nothing else', () => {
    expect(scopeOf('/apps/notes/user%3A42/mcp')).toEqual({ app: 'notes', space: 'user:42' });
    expect(scopeOf('/apps/notes/team%2Fx/mcp/')).toEqual({ app: 'notes', space: 'team/x' });
    expect(scopeOf('/mcp/notes/user%3A42')).toEqual({ app: 'notes', space: 'user:42' });
    for (const path of [
      '/apps/notes/user%3A42',
      '/apps/notes/mcp',
      '/apps/notes/user/extra/mcp',
      '/apps/notes/user/mcpx',
      '/apps//user/mcp',
      '/mcp/notes',
    ]) {
      expect(scopeOf(path), path).toBeNull();
    }
  });
});

describe('/apps/<app>/<space>/mcp confines like /mcp/<app>/<space>', () => {
  let client: Client;
  beforeAll(async () => {
    client = await httpClient(http.base + alias('user:a'), KA);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('advertises no space argument on any tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) expect(Object.keys((tool.inputSchema.properties ?? {}) as object), tool.name).not.toContain('space');
  });

  it('lists and reads only its space, whatever space is asked for', async () => {
    for (const args of [{ as_of: now() }, { as_of: now(), space: 'user:b' }]) {
      expect(ids((await structured(client, 'list_memories', args)).items)).toEqual(['a1']);
    }
    expect(await structured(client, 'get_memory', { id: 'b1', as_of: now() })).toMatchObject({ item: null, reason: 'absent' });
    const unconfined = await restCall(t, 'list_memories', { as_of: now() }, KA);
    expect(ids(unconfined.json.items)).toEqual(expect.arrayContaining(['a1', 'b1']));
  });

  it('writes into its space, and refuses an edge to a block outside it', async () => {
    const sc = await structured(client, 'remember', {
      space: 'user:b',
      nodes: [{ id: 'alias-c1', kind: 'claim', statement: 'written through the alias' }],
      edges: [{ source_id: 'alias-c1', target_id: 'b1', edge_type: 'CAUSES' }],
    });
    expect(sc.accepted).toBe(1);
    expect(sc.refused).toEqual([{ id: expect.stringContaining('b1'), kind: 'edge', reason: 'missing_endpoint' }]);
    const rest = await t.call('GET', '/v1/memories/alias-c1', { query: { as_of: now() }, key: KA });
    expect(rest.json.item.space).toBe('user:a');
  });
});

describe('the hosted opening rules hold at the alias', () => {
  it('needs the key for an ordinary space, and refuses a wrong key', async () => {
    expect(await initializeStatus(alias('user:a'))).toBe(401);
    expect(await initializeStatus(alias('user:a'), 'wrong-key')).toBe(401);
    expect(await initializeStatus(alias('user:a'), KA)).toBe(200);
  });

  it('opens a written svc space without a key in the tenant that wrote it, and 404s an unwritten one', async () => {
    expect(await initializeStatus(alias(SVC_UNWRITTEN))).toBe(404);
    const client = await httpClient(http.base + alias(SVC));
    try {
      expect(ids((await structured(client, 'list_memories', { as_of: now() })).items)).toEqual(['s-alpha']);
    } finally {
      await client.close();
    }
    const beta = await httpClient(http.base + alias(SVC), KB);
    try {
      expect(ids((await structured(beta, 'list_memories', { as_of: now() })).items)).toEqual([]);
    } finally {
      await beta.close();
    }
  });

  it('opens no door at other paths under /apps', async () => {
    for (const path of ['/apps/alias-app/user%3Aa', '/apps/alias-app/user%3Aa/mcp/extra', '/apps/alias-app/mcp']) {
      expect(await initializeStatus(path, KA), path).toBe(404);
    }
  });
});
