// App-scoped addresses: at /mcp/<app>/<space> every tool is confined to the space (nothing outside it can
// be read, searched, walked, resolved, exported or linked to; writes land in it), and the opening rules of
// a hosted deployment: a written `svc:<uuid>` space opens without a key in the tenant that wrote it first.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInstant } from '../storage/time.ts';
import { operations } from '../tools/index.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { httpClient, listen, restCall, stable, untarGz } from './helpers/mcp-client.ts';

const KA = 'conf-key-a';
const KB = 'conf-key-b';
const SVC = 'svc:3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f';
const SVC_UNWRITTEN = 'svc:00000000-1111-4222-8333-444444444444';
const has = (name: string): boolean => operations.some((o) => o.name === name);
const at = (space: string): string => `/mcp/test-app/${encodeURIComponent(space)}`;

let t: TestApp;
let http: { base: string; close(): Promise<void> };
const now = (): string => formatInstant(t.ledger.now());

async function rawInitialize(path: string, key?: string): Promise<number> {
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

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await client.callTool({ name, arguments: args });
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return r.structuredContent;
}

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: `${KA}=alpha,${KB}=beta` });
  http = await listen(t);
  const write = async (key: string, body: unknown): Promise<void> => {
    const r = await t.call('POST', '/v1/memories', { body, key });
    expect(r.status).toBe(200);
    expect(r.json.refused).toEqual([]);
  };
  await write(KA, {
    space: 'user:a',
    nodes: [
      {
        id: 'a1',
        kind: 'claim',
        statement: 'Tea harvest starts in May',
        asserted_at: '2024-03-01T00:00:00Z',
        fact_key: 'harvest.month',
        fact_value: 'May',
      },
      { id: 'a2', kind: 'claim', statement: 'Tea prices rise in June', asserted_at: '2024-03-02T00:00:00Z' },
    ],
    edges: [{ source_id: 'a1', target_id: 'a2', edge_type: 'CAUSES', asserted_at: '2024-03-02T00:00:00Z' }],
  });
  await write(KA, {
    space: 'user:b',
    nodes: [
      {
        id: 'b1',
        kind: 'claim',
        statement: 'Tea harvest fails after the drought',
        asserted_at: '2024-03-01T00:00:00Z',
        fact_key: 'harvest.month',
        fact_value: 'never',
      },
      { id: 'b2', kind: 'claim', statement: 'Tea harvest secrets of space b', asserted_at: '2024-03-01T00:00:00Z' },
    ],
    // An edge of space b pointing into space a: an unconfined writer may link across spaces.
    edges: [{ source_id: 'b1', target_id: 'a2', edge_type: 'CAUSES', asserted_at: '2024-03-03T00:00:00Z' }],
  });
  await write(KA, { space: SVC, nodes: [{ id: 's-alpha', kind: 'claim', statement: 'alpha wrote this svc space first' }] });
  await write(KB, { space: SVC, nodes: [{ id: 's-beta', kind: 'claim', statement: 'beta wrote the same svc space later' }] });
  if (has('declare_fact')) expect((await t.call('POST', '/v1/facts', { body: { fact_key: 'harvest.month' }, key: KA })).status).toBe(200);
});

afterAll(async () => {
  await http?.close();
  await t?.close();
});

describe('/mcp/<app>/<space> confines every tool', () => {
  let client: Client;
  beforeAll(async () => {
    client = await httpClient(http.base + at('user:a'), KA);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('advertises no space argument, and says the address is confined', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(operations.map((o) => o.name));
    for (const tool of tools) {
      expect(Object.keys((tool.inputSchema.properties ?? {}) as object), tool.name).not.toContain('space');
      expect(tool.inputSchema.required ?? [], tool.name).not.toContain('space');
      const op = operations.find((o) => o.name === tool.name)!;
      expect(tool.description, tool.name).toContain(
        op.confinable ? 'confined to the space "user:a"' : 'Not available at this app-scoped address',
      );
    }
  });

  it('lists only the space, whatever space argument is passed, exactly as REST lists that space', async () => {
    for (const args of [{ as_of: now() }, { as_of: now(), space: 'user:b' }]) {
      const sc = await call(client, 'list_memories', args);
      expect(sc.items.map((x: { id: string }) => x.id).sort()).toEqual(['a1', 'a2']);
      const rest = await restCall(t, 'list_memories', { as_of: args.as_of, space: 'user:a' }, KA);
      expect(stable(sc)).toEqual(stable(rest.json));
    }
  });

  it('reads a block of another space as absent, and hides edges that leave the space', async () => {
    const other = await call(client, 'get_memory', { id: 'b1', as_of: now() });
    expect(other).toMatchObject({ item: null, versions: [], edges: { in: [], out: [] }, reason: 'absent' });
    const own = await call(client, 'get_memory', { id: 'a2', as_of: now() });
    expect(own.item.id).toBe('a2');
    expect(own.edges.in.map((e: { source_id: string }) => e.source_id)).toEqual(['a1']);
    const unconfined = await restCall(t, 'get_memory', { id: 'a2', as_of: now() }, KA);
    expect(unconfined.json.edges.in.map((e: { source_id: string }) => e.source_id).sort()).toEqual(['a1', 'b1']);
  });

  it.skipIf(!has('search_memory'))('searches only the space, direct hits and expansions alike', async () => {
    for (const args of [
      { query: 'tea harvest', as_of: now(), depth: 3 },
      { query: 'tea harvest drought secrets', as_of: now(), space: 'user:b' },
    ]) {
      const sc = await call(client, 'search_memory', args);
      expect(sc.results.length).toBeGreaterThan(0);
      for (const r of sc.results) expect(r.node.space, JSON.stringify(r)).toBe('user:a');
    }
    const unconfined = await restCall(t, 'search_memory', { query: 'tea harvest drought secrets', as_of: now() }, KA);
    expect(unconfined.json.results.some((r: { node: { space: string } }) => r.node.space === 'user:b')).toBe(true);
  });

  it.skipIf(!has('why'))('walks the evidence chain inside the space only', async () => {
    const sc = await call(client, 'why', { id: 'a2', as_of: now(), depth: 5 });
    const ids = sc.chain.map((l: { node: { id: string } }) => l.node.id);
    expect(ids).toContain('a1');
    expect(ids).not.toContain('b1');
    for (const l of sc.chain) expect(l.node.space).toBe('user:a');
    expect(await call(client, 'why', { id: 'b1', as_of: now() })).toMatchObject({ chain: [], reason: 'absent' });
    const unconfined = await restCall(t, 'why', { id: 'a2', as_of: now(), depth: 5 }, KA);
    expect(unconfined.json.chain.map((l: { node: { id: string } }) => l.node.id)).toContain('b1');
  });

  it.skipIf(!has('resolve_fact'))('resolves a fact from the candidates of the space only', async () => {
    const sc = await call(client, 'resolve_fact', { fact: 'harvest.month', as_of: now(), space: 'user:b' });
    const text = JSON.stringify(sc);
    expect(text).toContain('a1');
    expect(text).not.toContain('b1');
    expect(text).not.toContain('never');
  });

  it.skipIf(!has('export_ledger'))('exports only the space', async () => {
    const r = await client.callTool({ name: 'export_ledger', arguments: { as_of: now(), space: 'user:b' } });
    expect(r.isError).toBeFalsy();
    const blob = (r.content as { type: string; resource?: { blob?: string } }[]).find((c) => c.type === 'resource')?.resource?.blob;
    const files = untarGz(Buffer.from(blob ?? '', 'base64'));
    const rows = (suffix: string): { space?: string; id?: string }[] =>
      ([...files].find(([n]) => n.endsWith(suffix))?.[1] ?? '')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { space?: string });
    const nodes = rows('nodes.jsonl');
    expect(nodes.map((n) => n.id).sort()).toEqual(['a1', 'a2']);
    for (const row of [...nodes, ...rows('edges.jsonl')]) expect(row.space).toBe('user:a');
    expect([...files.values()].join('\n')).not.toMatch(/drought|secrets|b1|b2/);
  });

  it('refuses operations that act on the whole tenant (declare_fact), so the address cannot reach past its space', async () => {
    const unconfinable = operations.filter((o) => !o.confinable);
    for (const op of unconfinable) {
      const r = await client.callTool({ name: op.name, arguments: { fact_key: 'harvest.month', policy: 'strict' } });
      expect(r.isError, op.name).toBe(true);
      expect((r._meta?.['memory-ledger/error'] as { error: string }).error, op.name).toBe('SVC_UNAUTHORIZED');
    }
    if (has('resolve_fact')) {
      const rest = await restCall(t, 'resolve_fact', { fact: 'harvest.month', as_of: now() }, KA);
      expect(JSON.stringify(rest.json)).not.toContain('"strict"');
    }
  });

  it('cannot overwrite or read a block of another space by reusing its id, nor confirm its content', async () => {
    // Ids are unique in the tenant, so the id is refused (the one thing a confined writer can learn is
    // that the id is taken); the same content written without an id lands under an id of its own space.
    const sc = await call(client, 'remember', {
      nodes: [{ id: 'b1', kind: 'claim', statement: 'Tea harvest fails after the drought', asserted_at: '2024-03-01T00:00:00Z' }],
    });
    expect(sc).toMatchObject({ accepted: 0, refused: [{ id: 'b1', kind: 'node', reason: 'id_conflict' }], warnings: [] });
    const derived = await call(client, 'remember', {
      nodes: [{ kind: 'claim', statement: 'Tea harvest fails after the drought', asserted_at: '2024-03-01T00:00:00Z' }],
    });
    expect(derived.accepted).toBe(1);
    expect(derived.ids[0]).not.toBe('b1');
    const b1 = await restCall(t, 'get_memory', { id: 'b1', as_of: now() }, KA);
    expect(b1.json.versions.map((v: { space: string }) => v.space)).toEqual(['user:b']);
  });

  it('writes into the space whatever space is named, and refuses edges to blocks outside it', async () => {
    const sc = await call(client, 'remember', {
      space: 'user:b',
      nodes: [{ id: 'c1', kind: 'claim', statement: 'written through the app address' }],
      edges: [
        { source_id: 'c1', target_id: 'b1', edge_type: 'CAUSES' },
        { source_id: 'c1', target_id: 'a1', edge_type: 'SUPPORTS' },
      ],
    });
    expect(sc.accepted).toBe(2);
    expect(sc.refused).toEqual([{ id: expect.stringContaining('b1'), kind: 'edge', reason: 'missing_endpoint' }]);
    const rest = await t.call('GET', '/v1/memories/c1', { query: { as_of: now() }, key: KA });
    expect(rest.json.item.space).toBe('user:a');
    expect(rest.json.edges.out.map((e: { target_id: string; space: string }) => [e.target_id, e.space])).toEqual([['a1', 'user:a']]);
  });

  it('keeps extracted blocks and their links inside the space when messages are written', async () => {
    const sc = await call(client, 'remember', {
      messages: [
        {
          content: 'Kenya expects a poor Tea harvest because the drought hurt the bushes.',
          observed_at: '2024-04-01T09:00:00Z',
          source_description: 'chat',
        },
      ],
    });
    expect(sc.accepted).toBeGreaterThan(0);
    const listed = await restCall(t, 'list_memories', { as_of: now(), limit: 1000 }, KA);
    const spaceOf = new Map<string, string>(listed.json.items.map((n: { id: string; space: string }) => [n.id, n.space]));
    for (const id of sc.ids as string[]) expect(spaceOf.get(id), id).toBe('user:a');
    let edges = 0;
    for (const id of sc.ids as string[]) {
      const g = await restCall(t, 'get_memory', { id, as_of: now() }, KA);
      for (const e of [...g.json.edges.in, ...g.json.edges.out]) {
        edges++;
        expect(e.space).toBe('user:a');
        expect(spaceOf.get(e.source_id), e.source_id).toBe('user:a');
        expect(spaceOf.get(e.target_id), e.target_id).toBe('user:a');
      }
    }
    expect(edges).toBeGreaterThan(0);
  });
});

describe('the streamable HTTP endpoint', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(http.base + path, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KA}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        ...headers,
      },
      body,
    });

  it('is stateless: no session id, and GET or DELETE (session operations) answer 405', async () => {
    const init = await post(
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    );
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await init.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('memory-ledger');
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${http.base}/mcp`, { method, headers: { authorization: `Bearer ${KA}`, accept: 'text/event-stream' } });
      expect(r.status, method).toBe(405);
    }
  });

  it('answers a tool call without a prior initialize, as one JSON body', async () => {
    const r = await post(
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'get_memory', arguments: { id: 'a1', as_of: now() } },
      }),
      { 'mcp-protocol-version': '2025-06-18' },
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as { id: number; result: { structuredContent: { item: { id: string } } } };
    expect(body.id).toBe(7);
    expect(body.result.structuredContent.item.id).toBe('a1');
  });

  it('refuses a body that is not JSON (400), not declared JSON (415), or an unknown tool, with JSON-RPC errors', async () => {
    const bad = await post('/mcp', '{not json');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const text = await post('/mcp', '{}', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const unknown = await post(
      '/mcp',
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'drop_everything', arguments: {} } }),
      { 'mcp-protocol-version': '2025-06-18' },
    );
    const u = (await unknown.json()) as { error?: { message: string }; result?: { isError: boolean } };
    expect(u.error?.message ?? (u.result?.isError ? 'tool error' : '')).toMatch(/drop_everything|tool error/);
  });
});

describe('opening an app address on a hosted deployment', () => {
  it('refuses /mcp and a non-svc space without a key, and any address with a wrong key', async () => {
    expect(await rawInitialize('/mcp')).toBe(401);
    expect(await rawInitialize(at('user:a'))).toBe(401);
    expect(await rawInitialize(at('svc:not-a-uuid'))).toBe(401);
    expect(await rawInitialize('/mcp', 'wrong-key')).toBe(401);
    expect(await rawInitialize(at(SVC), 'wrong-key')).toBe(401);
    expect(await rawInitialize(at('user:a'), KA)).toBe(200);
  });

  it('answers 404 for a svc space no tenant has written, without a key', async () => {
    expect(await rawInitialize(at(SVC_UNWRITTEN))).toBe(404);
    expect(await rawInitialize(at(SVC_UNWRITTEN), KB)).toBe(200);
  });

  it('answers 404 for an address that is not /mcp/<app>/<space>', async () => {
    expect(await rawInitialize('/mcp/only-app', KA)).toBe(404);
    expect(await rawInitialize('/mcp/app/space/extra', KA)).toBe(404);
  });

  it('opens a written svc space without a key in the tenant that wrote it first', async () => {
    const client = await httpClient(http.base + at(SVC));
    try {
      const sc = await call(client, 'list_memories', { as_of: now() });
      expect(sc.items.map((x: { id: string }) => x.id)).toEqual(['s-alpha']);
      await call(client, 'remember', { nodes: [{ id: 's-keyless', kind: 'claim', statement: 'written without a key' }] });
      const asAlpha = await t.call('GET', '/v1/memories/s-keyless', { query: { as_of: now() }, key: KA });
      expect(asAlpha.json.item).toMatchObject({ space: SVC, tenant: 'alpha' });
      const asBeta = await t.call('GET', '/v1/memories/s-keyless', { query: { as_of: now() }, key: KB });
      expect(asBeta.json.item).toBeNull();
    } finally {
      await client.close();
    }
  });

  it('lets the key decide the tenant when one is given, even at a svc address', async () => {
    const client = await httpClient(http.base + at(SVC), KB);
    try {
      const sc = await call(client, 'list_memories', { as_of: now() });
      expect(sc.items.map((x: { id: string }) => x.id)).toEqual(['s-beta']);
    } finally {
      await client.close();
    }
  });

  it('decodes the space segment, so a space holding a slash has its own address', async () => {
    const client = await httpClient(http.base + at('team/alpha:notes'), KA);
    try {
      await call(client, 'remember', { nodes: [{ id: 'slash-1', kind: 'claim', statement: 'a space with a slash' }] });
      const rest = await t.call('GET', '/v1/memories/slash-1', { query: { as_of: now() }, key: KA });
      expect(rest.json.item.space).toBe('team/alpha:notes');
    } finally {
      await client.close();
    }
  });
});
