// The HTTP threads' ceiling on requests in flight: counted across threads from arrival, a request past it is
// refused at once (REST 503 with Retry-After, MCP an error result naming its id) without a call to the
// ledger thread, and the count falls again as answers are given. And a REST search, while the ledger
// thread says the search queues are full, is refused the same way.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frontListener } from './front-listener.ts';
import { FRONT_COUNTS, type FrontReply } from './protocol.ts';
import { frontCatalog, searchGateWatch } from './start-fronts.ts';
import { gateLength } from '../../tools/search-gate.ts';

let server: Server;
let base = '';
const held: ((reply: FrontReply) => void)[] = [];
const called: string[] = [];
const inside = new SharedArrayBuffer(4 * FRONT_COUNTS.length);
const gate = new SharedArrayBuffer(4 * gateLength(2));

beforeAll(async () => {
  const calls = {
    call: (call: { operation: string }) => {
      called.push(call.operation);
      return new Promise<FrontReply>((resolve) => held.push(resolve));
    },
  };
  const passOn = {
    read: () => Promise.resolve(new Response('passed on', { status: 299 })),
    raw: (_req: unknown, res: import('node:http').ServerResponse) => void res.writeHead(299).end('passed on'),
  };
  const listener = frontListener(
    {
      ...frontCatalog,
      apiKeys: new Map([
        ['ka', 'alpha'],
        ['kb', 'beta'],
      ]),
      tenant: 'local',
      host: '127.0.0.1',
      maxBodyBytes: 1 << 20,
      maxRequests: 2,
      inside,
      gate,
      gateTenants: ['alpha', 'beta'],
    },
    calls,
    passOn,
  );
  server = createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

const list = (): Promise<Response> => fetch(`${base}/v1/memories?as_of=now`, { headers: { authorization: 'Bearer ka' } });
const toolCall = (): Promise<Response> =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: 'Bearer ka', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'list_memories', arguments: { as_of: 'now' } } }),
  });

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

describe('an HTTP thread over SVC_MAX_REQUESTS', () => {
  it('refuses past the ceiling at once and takes requests again once answers are given', async () => {
    const first = list();
    const second = toolCall();
    await until(() => held.length === 2);
    expect(new Int32Array(inside)[0]).toBe(2);

    const rest = await list();
    expect(rest.status).toBe(503);
    expect(rest.headers.get('retry-after')).toBe('1');
    expect(((await rest.json()) as { detail: { error: string } }).detail.error).toBe('overloaded');
    const mcp = await toolCall();
    expect(mcp.status).toBe(200);
    const refused = (await mcp.json()) as { id: number; result: { isError: boolean; content: { text: string }[] } };
    expect(refused.id).toBe(41);
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0]?.text).toMatch(/retry/i);
    expect(called).toEqual(['list_memories', 'list_memories']);
    // Not operation requests: never counted, never refused.
    expect((await fetch(`${base}/v1/version`)).status).toBe(299);

    const [restCall, mcpCall] = held.splice(0);
    restCall?.({ id: 0, kind: 'rest', status: 200, body: '{"items":[]}' });
    mcpCall?.({ id: 0, kind: 'mcp', result: JSON.stringify({ content: [{ type: 'text', text: 'no blocks' }] }) });
    expect((await first).status).toBe(200);
    expect(await (await second).json()).toEqual({ jsonrpc: '2.0', id: 41, result: { content: [{ type: 'text', text: 'no blocks' }] } });
    await until(() => new Int32Array(inside)[0] === 0);
    const again = list();
    await until(() => held.length === 1);
    held.splice(0)[0]?.({ id: 0, kind: 'rest', status: 200, body: '{"items":[]}' });
    expect((await again).status).toBe(200);
  });
});

describe('an HTTP thread while the search lanes would refuse a search', () => {
  const search = (key = 'ka'): Promise<Response> =>
    fetch(`${base}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'x', as_of: 'now' }),
    });
  const watch = searchGateWatch(new Int32Array(gate), ['alpha', 'beta']);

  it("refuses a REST search unread when both lanes are crowded (503) or its key's share of both is full (429); other requests go on", async () => {
    called.length = 0;
    watch.crowded('heavy', 3);
    watch.crowded('searches', 2);
    try {
      const refused = await search();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('3');
      expect(((await refused.json()) as { detail: { error: string } }).detail.error).toBe('overloaded');
      expect(called).toEqual([]);
      const listed = list();
      await until(() => held.length === 1);
      held.splice(0)[0]?.({ id: 0, kind: 'rest', status: 200, body: '{"items":[]}' });
      expect((await listed).status).toBe(200);
      expect(called).toEqual(['list_memories']);
      // One lane crowded, the key's share of the other full: refused for that key only.
      watch.crowded('searches', 0);
      watch.share('searches', 'alpha', 4);
      const overShare = await search('ka');
      expect(overShare.status).toBe(429);
      expect(overShare.headers.get('retry-after')).toBe('4');
      expect(called).toEqual(['list_memories']);
      const other = search('kb');
      await until(() => held.length === 1);
      expect(called).toEqual(['list_memories', 'search_memory']);
      held.splice(0)[0]?.({ id: 0, kind: 'rest', status: 200, body: '{"results":[]}' });
      expect((await other).status).toBe(200);
    } finally {
      watch.crowded('heavy', 0);
      watch.crowded('searches', 0);
      watch.share('searches', 'alpha', 0);
    }
    const taken = search();
    await until(() => held.length === 1);
    expect(called).toEqual(['list_memories', 'search_memory', 'search_memory']);
    held.splice(0)[0]?.({ id: 0, kind: 'rest', status: 200, body: '{"results":[]}' });
    expect((await taken).status).toBe(200);
    await until(() => new Int32Array(inside)[FRONT_COUNTS.requests] === 0);
  });
});
