// An HTTP thread's answers against the doors' own: the same requests through `frontAnswers` (its calls
// carried over a real message channel to `answerCalls` on the same ledger) and through the app get the
// same status and body, and only what the thread does not answer itself is passed on.
import { MessageChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { answerCalls } from './answer-calls.ts';
import { frontAnswers } from './front-answers.ts';
import { LedgerCalls } from './ledger-calls.ts';
import { frontCatalog } from './start-fronts.ts';

let t: TestApp;
let front: (request: Request) => Promise<Response>;
const passed: string[] = [];
let closeChannel: () => void;

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: 'ka=alpha,kb=beta', SVC_MAX_HEAVY: '1', SVC_MAX_REQUESTS: '4' });
  const { port1, port2 } = new MessageChannel();
  answerCalls(port1, () => ({ ledger: t.ledger, services: t.started.services }));
  closeChannel = () => {
    port1.close();
    port2.close();
  };
  const passOn = {
    read: async (request: Request, text?: string): Promise<Response> => {
      passed.push(`${request.method} ${new URL(request.url).pathname}`);
      const body = text ?? (request.body ? await request.text() : undefined);
      return t.app.request(request.url, { method: request.method, headers: request.headers, body });
    },
  };
  front = frontAnswers(
    { ...frontCatalog, apiKeys: t.config.apiKeys, tenant: t.config.tenant, host: t.config.host, maxBodyBytes: t.config.maxBodyBytes },
    new LedgerCalls(port2),
    passOn,
  );
});

afterAll(async () => {
  closeChannel();
  await t.close();
});

const MCP_ACCEPT = 'application/json, text/event-stream';

function request(method: string, path: string, opts: { key?: string; body?: unknown; raw?: string; accept?: string } = {}): Request {
  const headers: Record<string, string> = {};
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.accept) headers.accept = opts.accept;
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Request(`http://ledger.test${path}`, { method, headers, body });
}

/** The answer, with when it was answered (`tx_as_of`, different in two answers of the same read) left out. */
async function answer(res: Response): Promise<{ status: number; json: unknown; retryAfter: string | null }> {
  const text = (await res.text()).replace(/"tx_as_of":"[^"]*"/g, '"tx_as_of":"-"');
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: compared as text
  }
  return { status: res.status, json, retryAfter: res.headers.get('retry-after') };
}

/** The same request answered by the thread and by the app. */
async function both(method: string, path: string, opts: Parameters<typeof request>[2] = {}) {
  const here = await answer(await front(request(method, path, opts)));
  const app = await answer(await t.app.request(request(method, path, opts)));
  return { here, app };
}

const toolCall = (name: string, args: Record<string, unknown>, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('an HTTP thread answers as the doors do', () => {
  let instant = '';

  it('writes through the thread land in the ledger, for the key that wrote them', async () => {
    passed.length = 0;
    const write = await answer(
      await front(
        request('POST', '/v1/memories', {
          key: 'ka',
          body: {
            space: 'user:a',
            nodes: [
              { id: 'tea', kind: 'claim', statement: 'Alice drinks green tea every morning' },
              { id: 'bike', kind: 'claim', statement: 'Alice rides her bike to work' },
            ],
          },
        }),
      ),
    );
    expect(write.status).toBe(200);
    expect(write.json).toMatchObject({ accepted: 2, ids: ['tea', 'bike'] });
    const mcp = await answer(
      await front(
        request('POST', '/mcp', {
          key: 'ka',
          accept: MCP_ACCEPT,
          body: toolCall('remember', { space: 'user:b', nodes: [{ id: 'boat', kind: 'claim', statement: 'Bob sails on Sundays' }] }),
        }),
      ),
    );
    expect(mcp.status).toBe(200);
    expect(mcp.json).toMatchObject({ id: 1, result: { structuredContent: { accepted: 1, ids: ['boat'] } } });
    expect(passed).toEqual([]);
    const seen = await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: 'now' } });
    const listed = seen.json as { items: unknown[]; certificate: { as_of: string } };
    expect(listed.items).toHaveLength(3);
    instant = listed.certificate.as_of;
    const other = await t.call('GET', '/v1/memories', { key: 'kb', query: { as_of: 'now' } });
    expect(JSON.stringify(other.json)).not.toContain('green tea');
  });

  it('reads, searches and refusals get the same status and body', async () => {
    passed.length = 0;
    const cases: [string, string, Parameters<typeof request>[2]][] = [
      ['GET', `/v1/memories?as_of=${instant}&space=user:a`, { key: 'ka' }],
      ['GET', `/v1/memories/tea?as_of=${instant}`, { key: 'ka' }],
      ['GET', `/v1/memories/tea?as_of=${instant}`, { key: 'kb' }],
      ['POST', '/v1/search', { key: 'ka', body: { space: 'user:a', query: 'what does Alice drink', as_of: instant } }],
      ['GET', `/v1/spaces?as_of=${instant}`, { key: 'ka' }],
      ['GET', `/v1/memories/tea/why?as_of=${instant}`, { key: 'ka' }],
      ['GET', '/v1/memories?space=user:a', { key: 'ka' }], // no as_of: 400 SVC_AS_OF_REQUIRED
      ['GET', `/v1/memories?as_of=${instant}&spcae=user:a`, { key: 'ka' }], // 422, located in the query
      ['GET', `/v1/memories/tea?as_of=${instant}&limit=0`, { key: 'ka' }],
      ['POST', '/v1/search?space=user:a', { key: 'ka', body: { query: 'tea', as_of: instant } }], // a body route's query: 422
      ['POST', '/v1/search', { key: 'ka', raw: '{"query": "tea",' }], // 400 invalid_json
      ['POST', '/v1/search', { key: 'ka', body: [1, 2] }],
      ['POST', '/v1/search', { body: { query: 'tea', as_of: instant } }], // no key: 401
      ['POST', '/v1/search', { key: 'nope', body: { query: 'tea', as_of: instant } }],
    ];
    for (const [method, path, opts] of cases) {
      const { here, app } = await both(method, path, opts);
      expect({ path, ...here }).toEqual({ path, ...app });
    }
    const statuses: number[] = [];
    for (const [method, path, opts] of cases) statuses.push((await front(request(method, path, opts))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 400, 422, 422, 422, 400, 400, 401, 401]);
    const otherKey = await front(request('GET', `/v1/memories/tea?as_of=${instant}`, { key: 'kb' }));
    expect(await otherKey.text()).not.toContain('green tea');
    expect(passed).toEqual([]);
  });

  it('MCP tool calls get the same result, app-scoped addresses stay confined', async () => {
    passed.length = 0;
    const calls: [string, Record<string, unknown>][] = [
      ['list_memories', { as_of: instant, space: 'user:a' }],
      ['search_memory', { as_of: instant, space: 'user:a', query: 'bike' }],
      ['list_memories', { as_of: instant, limit: 0 }], // isError, named field
      ['no_such_tool', {}], // passed on: the SDK answers an unknown tool
    ];
    for (const [name, args] of calls) {
      const opts = { key: 'ka', accept: MCP_ACCEPT, body: toolCall(name, args, 7) };
      const { here, app } = await both('POST', '/mcp', opts);
      expect({ name, ...here }).toEqual({ name, ...app });
    }
    expect(passed).toEqual(['POST /mcp']);
    const scoped = await answer(
      await front(
        request('POST', '/mcp/app/user%3Ab', { key: 'ka', accept: MCP_ACCEPT, body: toolCall('list_memories', { as_of: instant }) }),
      ),
    );
    const text = JSON.stringify(scoped.json);
    expect(text).toContain('Bob sails');
    expect(text).not.toContain('green tea');
  });

  it('passes on what it does not answer: exports, the tool list, other routes', async () => {
    passed.length = 0;
    const exported = await front(request('GET', `/v1/export?as_of=${instant}`, { key: 'ka' }));
    expect(exported.status).toBe(200);
    const bytes = new Uint8Array(await exported.arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    const list = await answer(
      await front(request('POST', '/mcp', { key: 'ka', accept: MCP_ACCEPT, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } })),
    );
    expect((list.json as { result: { tools: unknown[] } }).result.tools.length).toBe(10);
    const missing = await front(request('GET', '/v1/nothing-here', { key: 'ka' }));
    expect(missing.status).toBe(404);
    expect(passed).toEqual(['GET /v1/export', 'POST /mcp', 'GET /v1/nothing-here']);
  });

  it('answers the JSON content types clients send and passes the rest on, answered as the door does', async () => {
    passed.length = 0;
    const call = JSON.stringify(toolCall('list_memories', { as_of: instant, space: 'user:a' }, 3));
    const mcp = (contentType: string): Request =>
      new Request('http://ledger.test/mcp', {
        method: 'POST',
        headers: { authorization: 'Bearer ka', accept: MCP_ACCEPT, 'content-type': contentType },
        body: call,
      });
    const charset = await answer(await front(mcp('application/json; charset=utf-8')));
    expect(charset.status).toBe(200);
    expect(JSON.stringify(charset.json)).toContain('green tea');
    expect(passed).toEqual([]);
    const here = await answer(await front(mcp('Application/JSON')));
    const app = await answer(await t.app.request(mcp('Application/JSON')));
    expect(here).toEqual(app);
    expect(here.status).toBe(200);
    expect(passed).toEqual(['POST /mcp']);
  });

  it('reads a body sent without a length (chunked) as the door does', async () => {
    passed.length = 0;
    const chunked = (): Request =>
      new Request('http://ledger.test/v1/search', {
        method: 'POST',
        headers: { authorization: 'Bearer ka', 'content-type': 'application/json' },
        body: new Blob([JSON.stringify({ space: 'user:a', query: 'bike', as_of: instant })]).stream(),
        duplex: 'half',
      } as RequestInit);
    expect(chunked().headers.get('content-length')).toBeNull();
    const here = await answer(await front(chunked()));
    const app = await answer(await t.app.request(chunked()));
    expect(here).toEqual(app);
    expect(JSON.stringify(here.json)).toContain('bike');
    expect(passed).toEqual([]);
  });

  it('on a local server without keys, passes on a call from a browser (an Origin) for the door to check', async () => {
    passed.length = 0;
    const { port1, port2 } = new MessageChannel();
    answerCalls(port1, () => ({ ledger: t.ledger, services: t.started.services }));
    const local = frontAnswers(
      { ...frontCatalog, apiKeys: null, tenant: 'alpha', host: '127.0.0.1', maxBodyBytes: t.config.maxBodyBytes },
      new LedgerCalls(port2),
      { read: async (request) => (passed.push(`${request.method} ${new URL(request.url).pathname}`), new Response(null, { status: 418 })) },
    );
    try {
      const call = (origin?: string): Request =>
        new Request('http://ledger.test/mcp', {
          method: 'POST',
          headers: { accept: MCP_ACCEPT, 'content-type': 'application/json', ...(origin ? { origin } : {}) },
          body: JSON.stringify(toolCall('list_memories', { as_of: instant, space: 'user:a' })),
        });
      const fromBrowser = await local(call('http://evil.example'));
      expect(fromBrowser.status).toBe(418);
      expect(passed).toEqual(['POST /mcp']);
      const fromAgent = await answer(await local(call()));
      expect(fromAgent.status).toBe(200);
      expect(JSON.stringify(fromAgent.json)).toContain('green tea');
      expect(passed).toEqual(['POST /mcp']);
    } finally {
      port1.close();
      port2.close();
    }
  });

  it('sends on whole an input too deep to carry to the ledger thread, which answers it as the door does', async () => {
    passed.length = 0;
    const raw = `{"space":"s","nodes":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const { here, app } = await both('POST', '/v1/memories', { key: 'ka', raw });
    expect(here).toEqual(app);
    expect(here.status).toBeGreaterThanOrEqual(400);
    expect(here.status).toBeLessThan(500);
    expect(passed).toEqual(['POST /v1/memories']);
  });

  it('refuses over SVC_MAX_REQUESTS as the doors do: REST 503 with Retry-After, MCP an error result that says to retry', async () => {
    const admission = t.started.services.admission;
    if (!admission) throw new Error('the test app runs admission');
    const held = Array.from({ length: 4 }, () => admission.arrive(false));
    try {
      const rest = await answer(await front(request('GET', `/v1/memories?as_of=${instant}`, { key: 'ka' })));
      expect(rest.status).toBe(503);
      expect(Number(rest.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(rest.json).toMatchObject({ detail: { error: 'overloaded' } });
      const mcp = await answer(
        await front(request('POST', '/mcp', { key: 'ka', accept: MCP_ACCEPT, body: toolCall('list_memories', { as_of: instant }) })),
      );
      expect(mcp.status).toBe(200);
      expect(Number(mcp.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(mcp.json).toMatchObject({ result: { isError: true } });
      expect(JSON.stringify(mcp.json)).toMatch(/retry/i);
    } finally {
      for (const h of held) h.release();
    }
    const after = await front(request('GET', `/v1/memories?as_of=${instant}`, { key: 'ka' }));
    expect(after.status).toBe(200);
  });
});
