// One registry, two doors: every tool is listed with its operation's schema, and every call answers with
// the REST body for the same input (or the same error code and detail). Run once per transport: the SDK
// client over an in-memory pair, and over streamable HTTP against the app on a real port.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatInstant } from '../storage/time.ts';
import { HIDDEN_FIELDS, modelSchema } from '../server/mcp/model-schema.ts';
import { operations } from '../tools/index.ts';
import { inputJsonSchema } from '../tools/json-schema.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { httpClient, inMemoryClient, listen, restCall, stable, untarGz } from './helpers/mcp-client.ts';

const KEY = 'parity-key-alpha';
const has = (name: string): boolean => operations.some((o) => o.name === name);

let t: TestApp;
let http: { base: string; close(): Promise<void> };
let T = '';

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: `${KEY}=alpha,parity-key-beta=beta` });
  http = await listen(t);
  const seed = async (body: unknown): Promise<void> => {
    const r = await t.call('POST', '/v1/memories', { body, key: KEY });
    expect(r.status).toBe(200);
  };
  await seed({
    space: 'user:p',
    nodes: [
      {
        id: 'p1',
        kind: 'claim',
        statement: 'Tea harvest starts in May',
        asserted_at: '2024-03-01T00:00:00Z',
        fact_key: 'harvest.month',
        fact_value: 'May',
      },
      { id: 'p2', kind: 'claim', statement: 'Tea prices rise in June', asserted_at: '2024-03-02T00:00:00Z' },
    ],
    edges: [{ source_id: 'p1', target_id: 'p2', edge_type: 'CAUSES', asserted_at: '2024-03-02T00:00:00Z' }],
  });
  await seed({
    space: 'user:q',
    nodes: [{ id: 'q1', kind: 'claim', statement: 'Coffee harvest starts in June', fact_key: 'harvest.month', fact_value: 'June' }],
  });
  if (has('declare_fact')) expect((await t.call('POST', '/v1/facts', { body: { fact_key: 'harvest.month' }, key: KEY })).status).toBe(200);
  T = formatInstant(t.ledger.now());
});

afterAll(async () => {
  await http?.close();
  await t?.close();
});

/** Inputs answered the same way however often they are asked (reads, refused writes). */
function cases(): [string, Record<string, unknown>][] {
  return [
    ['list_memories', { as_of: T, space: 'user:p' }],
    ['list_memories', { as_of: T, limit: 1 }],
    ['list_memories', { as_of: '2000-01-01' }],
    ['list_memories', { as_of: T, limit: 5000 }],
    ['get_memory', { id: 'p1', as_of: T }],
    ['get_memory', { id: 'p1', as_of: '2000-01-01' }],
    ['get_memory', { id: 'no-such-block', as_of: T }],
    ['get_memory', { id: 'p1', as_of: '2024-03-01T00:00:00' }],
    ['get_memory', { id: 'p1', as_of: 'yesterday' }],
    ['remember', { space: '', nodes: [] }],
    ['remember', { nodes: [{ kind: 'claim', statement: 'no space' }] }],
    ['remember', { space: 'user:p', nodes: [{ statement: 'no kind' }] }],
    ['search_memory', { query: 'tea harvest', as_of: T }],
    ['search_memory', { query: 'tea harvest', as_of: T, space: 'user:q' }],
    ['search_memory', { query: 'tea', as_of: T, limit: 0 }],
    ['why', { id: 'p2', as_of: T }],
    ['why', { id: 'p2', as_of: '2000-01-01' }],
    ['why', { id: 'no-such-block', as_of: T }],
    ['resolve_fact', { fact: 'harvest.month', as_of: T }],
    ['resolve_fact', { fact: 'harvest.month', as_of: T, space: 'user:q' }],
    ['declare_fact', { fact_key: 'x', policy: 'source_priority' }],
    ['declare_fact', { fact_key: '' }],
  ];
}

async function expectSameAnswer(client: Client, operation: string, input: Record<string, unknown>): Promise<void> {
  const mcp = await client.callTool({ name: operation, arguments: input });
  const rest = await restCall(t, operation, input, KEY);
  const sc = mcp.structuredContent as Record<string, any> | undefined;
  const label = `${operation} ${JSON.stringify(input)}`;
  if (rest.status === 200) {
    expect(mcp.isError, label).toBeFalsy();
    expect(stable(sc), label).toEqual(stable(rest.json));
    expect((mcp.content as { type: string; text?: string }[])[0]?.text, label).toMatch(new RegExp(`^${operation}: `));
  } else {
    expect(mcp.isError, label).toBe(true);
    // Nothing a strict client would hold to the output schema; no HTTP status in an MCP result.
    expect(sc, label).toBeUndefined();
    const meta = mcp._meta?.['memory-ledger/error'] as Record<string, any>;
    expect(meta.status, label).toBeUndefined();
    const detail = rest.json.detail;
    expect(meta.error, label).toBe(Array.isArray(detail) ? 'invalid_input' : detail.error);
    if (Array.isArray(detail))
      expect(asSentOverHttp(meta.issues, detail), label).toEqual(detail.map((i: { loc: unknown[] }) => ({ ...i, loc: i.loc.slice(1) })));
    else expect(meta.why, label).toBe(detail.why);
    // The text names the argument as the call named it, never REST's query./body. prefix.
    const text = (mcp.content as { text: string }[])[0]!.text;
    expect(text, label).toMatch(new RegExp(`^${meta.error}: `));
    expect(text, label).not.toMatch(/\b(query|body|path)\.\w/);
  }
}

/** A 422 item's `input` is the value as sent: over MCP a number, in a REST query string its text. */
function asSentOverHttp(issues: { input: unknown }[], rest: { loc: unknown[] }[]): unknown {
  return issues.map((i, n) =>
    rest[n]?.loc[0] === 'query' && i.input !== null && typeof i.input !== 'object' ? { ...i, input: String(i.input) } : i,
  );
}

const transports: [string, () => Promise<Client>][] = [
  ['in-memory', () => inMemoryClient({ ledger: t.ledger, tenant: 'alpha', services: t.started.services })],
  ['streamable HTTP', () => httpClient(`${http.base}/mcp`, KEY)],
];

describe.each(transports)('MCP over %s', (_name, connect) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists one tool per registered operation, advertising the operation schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(operations.map((o) => o.name));
    for (const op of operations) {
      const tool = tools.find((x) => x.name === op.name)!;
      // The operation's own schema, with instants and edge types declared (tools/json-schema.ts).
      const own = z.toJSONSchema(op.input, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as {
        properties?: object;
        required?: string[];
      };
      expect(tool.inputSchema, op.name).toEqual(modelSchema(inputJsonSchema(op)));
      const offered = Object.keys(own.properties ?? {}).filter((f) => !HIDDEN_FIELDS.has(f));
      expect(Object.keys(tool.inputSchema.properties ?? {}), op.name).toEqual(offered);
      expect(tool.inputSchema.required ?? [], op.name).toEqual(own.required ?? []);
      expect(tool.description, op.name).toContain(op.description);
      if (op.requiresAsOf) expect(tool.description, op.name).toMatch(/as_of/);
      expect(tool.annotations?.destructiveHint ?? false, op.name).toBe(op.name === 'invalidate_memory');
    }
  });

  it('answers every read without as_of with SVC_AS_OF_REQUIRED, like REST, even when the rest is wrong too', async () => {
    for (const op of operations.filter((o) => o.requiresAsOf)) {
      await expectSameAnswer(client, op.name, {});
      await expectSameAnswer(client, op.name, { id: 42, query: [], limit: 'x', fact: null });
      const none = await client.callTool({ name: op.name });
      expect(none.isError).toBe(true);
      expect((none._meta?.['memory-ledger/error'] as { error?: string }).error).toBe('SVC_AS_OF_REQUIRED');
    }
  });

  it('answers each case with the REST body for the same input, or the same error', async () => {
    for (const [operation, input] of cases()) if (has(operation)) await expectSameAnswer(client, operation, input);
  });

  it('writes like REST: a re-sent write is the same no-op through either door', async () => {
    const input = { space: 'user:w', nodes: [{ id: `w-${_name}`, kind: 'claim', statement: `written over ${_name}` }] };
    const first = await client.callTool({ name: 'remember', arguments: input });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toMatchObject({ accepted: 1, refused: [], ids: [`w-${_name}`] });
    const again = await client.callTool({ name: 'remember', arguments: input });
    const rest = await restCall(t, 'remember', input, KEY);
    expect(rest.status).toBe(200);
    expect(again.structuredContent).toEqual(rest.json);
    expect(rest.json.accepted).toBe(0);
    const read = await t.call('GET', `/v1/memories/w-${encodeURIComponent(_name)}`, {
      query: { as_of: formatInstant(t.ledger.now()) },
      key: KEY,
    });
    expect(read.json.item).toMatchObject({ space: 'user:w', statement: `written over ${_name}` });
  });

  it.skipIf(!has('declare_fact'))('declares a fact that the REST resolve then applies', async () => {
    const fact = `mcp.fact.${_name.replace(/\W/g, '')}`;
    const r = await client.callTool({ name: 'declare_fact', arguments: { fact_key: fact, policy: 'latest_valid' } });
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { declared: { fact_key: string } }).declared.fact_key).toBe(fact);
    const rest = await restCall(t, 'resolve_fact', { fact, as_of: formatInstant(t.ledger.now()) }, KEY);
    expect(rest.status).toBe(200);
    expect(JSON.stringify(rest.json)).not.toMatch(/undeclared|not_declared/);
  });

  it.skipIf(!has('export_ledger'))('returns the export bundle as an embedded gzip resource holding what REST streams', async () => {
    const input = { as_of: T, space: 'user:p' };
    const r = await client.callTool({ name: 'export_ledger', arguments: input });
    expect(r.isError).toBeFalsy();
    const resource = (r.content as { type: string; resource?: { uri: string; mimeType?: string; blob?: string } }[]).find(
      (c) => c.type === 'resource',
    )?.resource;
    expect(resource?.mimeType).toBe('application/gzip');
    const mcpFiles = untarGz(Buffer.from(resource!.blob!, 'base64'));
    const rest = await restCall(t, 'export_ledger', input, KEY);
    expect(rest.status).toBe(200);
    const restFiles = untarGz(rest.bytes);
    expect([...mcpFiles.keys()].sort()).toEqual([...restFiles.keys()].sort());
    const nodes = [...mcpFiles].find(([name]) => name.endsWith('nodes.jsonl'))?.[1] ?? '';
    expect(nodes).toContain('"p1"');
    for (const [name, text] of mcpFiles) if (name.endsWith('.jsonl')) expect(text, name).toBe(restFiles.get(name));
    expect((r.structuredContent as { filename: string }).filename).toMatch(/^ledger-alpha-user.*\.tar\.gz$/);
  });
});

describe('MCP over streamable HTTP, 2026-07-28 era', () => {
  it('serves a client that negotiates the modern protocol revision with the same answers', async () => {
    const { Client: SdkClient, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new SdkClient({ name: 'ledger-test-modern', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${http.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toEqual(operations.map((o) => o.name));
      await expectSameAnswer(client, 'get_memory', { id: 'p1', as_of: T });
      await expectSameAnswer(client, 'get_memory', { id: 'p1' });
    } finally {
      await client.close();
    }
  });
});
