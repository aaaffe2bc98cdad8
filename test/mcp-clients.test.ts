// What the clients agents are built on do with our answers: the official SDK's v1 client (what most agents
// use; it holds structuredContent to a tool's output schema and throws on a mismatch) and the v2 client,
// both over streamable HTTP against the app on a real port. Every tool, given bad input, must come back
// as a readable isError result naming the argument, never as an exception in the client.
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../tools/index.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { httpClient, listen } from './helpers/mcp-client.ts';

interface ToolResult {
  isError?: boolean;
  content?: unknown;
  structuredContent?: unknown;
}
type Call = (name: string, args: Record<string, unknown>) => Promise<ToolResult>;

let t: TestApp;
let http: { base: string; close(): Promise<void> };
const clients: { name: string; call: Call; close(): Promise<void> }[] = [];

beforeAll(async () => {
  t = await startTestApp();
  http = await listen(t);
  await t.call('POST', '/v1/memories', {
    body: { space: 'user:c', nodes: [{ id: 'c1', kind: 'claim', statement: 'Kettles boil water', fact_key: 'k', fact_value: 1 }] },
  });
  const v1 = new V1Client({ name: 'ledger-test-v1', version: '1' });
  await v1.connect(new V1Transport(new URL(`${http.base}/mcp`)));
  clients.push({
    name: 'v1 SDK client',
    call: (name, args) => v1.callTool({ name, arguments: args }) as Promise<ToolResult>,
    close: () => v1.close(),
  });
  const v2 = await httpClient(`${http.base}/mcp`);
  clients.push({ name: 'v2 SDK client', call: (name, args) => v2.callTool({ name, arguments: args }), close: () => v2.close() });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await http?.close();
  await t?.close();
});

const textOf = (r: ToolResult): string =>
  (r.content as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

/** A value of the wrong kind for a property: an object where a scalar is expected, else a number. */
function wrongFor(schema: Record<string, unknown>): unknown {
  const text = JSON.stringify(schema);
  return /"type":"(object|array)"/.test(text) && !/"type":"number"|"type":"integer"/.test(text) ? 7 : { wrong: true };
}

/** The bad inputs of one tool: an unknown argument, and each declared argument given a wrong kind of value. */
function badInputs(
  op: (typeof operations)[number],
  properties: Record<string, Record<string, unknown>>,
): [string, Record<string, unknown>][] {
  const base: Record<string, unknown> = op.requiresAsOf ? { as_of: 'now' } : {};
  const out: [string, Record<string, unknown>][] = [['colour', { ...base, colour: 'red' }]];
  for (const [field, schema] of Object.entries(properties)) {
    // A field that takes any JSON (a fact's value) has no wrong kind.
    if (!/"type"/.test(JSON.stringify(schema))) continue;
    out.push([field, { ...base, [field]: wrongFor(schema) }]);
  }
  return out;
}

describe.each([0, 1])('client %#', (index) => {
  it('every tool, given bad input, answers a readable isError naming the argument, and the client does not throw', async () => {
    const client = clients[index]!;
    const listing = await t.app.request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const tools = ((await listing.json()) as { result: { tools: { name: string; inputSchema: { properties?: object } }[] } }).result.tools;
    let checked = 0;
    for (const op of operations) {
      const tool = tools.find((x) => x.name === op.name)!;
      for (const [field, args] of badInputs(op, (tool.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
        const label = `${client.name} ${op.name} ${JSON.stringify(args)}`;
        const r = await client.call(op.name, args);
        expect(r.isError, label).toBe(true);
        expect(r.structuredContent, label).toBeUndefined();
        const text = textOf(r);
        expect(text, label).toMatch(new RegExp(`\\b${field}\\b`));
        expect(text, label).not.toMatch(/\b(query|body|path)\.\w/);
        expect(text, label).not.toContain('[object Object]');
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(operations.length * 2);
  });

  it('a read without as_of and a limit that is not a number read as plain sentences', async () => {
    const client = clients[index]!;
    const none = await client.call('list_memories', {});
    expect(none.isError).toBe(true);
    expect(textOf(none)).toMatch(/^SVC_AS_OF_REQUIRED: .*pass as_of/);
    const bad = await client.call('list_memories', { as_of: 'now', limit: 'abc' });
    expect(textOf(bad)).toMatch(/^invalid_input: limit: .*number.*\(sent "abc"\)\. Fix the argument named above/);
  });

  it("normal calls pass the client's output-schema check", async () => {
    const client = clients[index]!;
    const good: [string, Record<string, unknown>][] = [
      ['remember', { space: 'user:c', nodes: [{ kind: 'claim', statement: `Tea steeps ${index}` }] }],
      ['list_memories', { as_of: 'now' }],
      ['get_memory', { id: 'c1', as_of: 'now' }],
      ['search_memory', { query: 'kettle', as_of: 'now' }],
      ['why', { id: 'c1', as_of: 'now' }],
      ['declare_fact', { fact_key: 'k' }],
      ['resolve_fact', { fact: 'k', as_of: 'now' }],
      ['list_spaces', { as_of: 'now' }],
      ['export_ledger', { as_of: 'now', space: 'user:c' }],
    ];
    for (const [name, args] of good) {
      if (!operations.some((o) => o.name === name)) continue;
      const r = await client.call(name, args);
      expect(r.isError, `${name}: ${textOf(r)}`).toBeFalsy();
      expect(r.structuredContent, name).toBeTypeOf('object');
    }
  });
});
