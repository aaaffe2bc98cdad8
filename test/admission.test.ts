// Admission control through both doors, made deterministic by holding the heavy slots from the test:
// while they are held, every search queues or is refused, and which one is decided by counts, never by
// timing. Lists, gets and writes do not queue, so they are answered whatever searches are doing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerShedding } from '../server/early-shed.ts';
import { ERROR_META_KEY } from '../server/mcp/error-meta.ts';
import type { Admission, Admitted } from '../tools/admission.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const search = (t: TestApp, key: string, query = 'harvest'): Promise<{ status: number; json: any; headers: Headers }> =>
  t.call('POST', '/v1/search', { key, body: { query, as_of: 'now' } });

async function mcpCall(t: TestApp, key: string, name: string, args: Record<string, unknown>): Promise<any> {
  const res = await t.app.request('http://ledger.test/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  return res.json();
}

function gate(t: TestApp): Admission {
  const admission = t.started.services.admission;
  if (!admission) throw new Error('the test server runs without admission control');
  return admission;
}

/** Takes every heavy slot, so the next heavy request queues. */
async function holdSlots(t: TestApp): Promise<Admitted[]> {
  const held: Admitted[] = [];
  for (let i = 0; i < gate(t).limits.maxHeavy; i++) held.push(await gate(t).admit('test-holder', 'heavy'));
  return held;
}

/** Lets the event loop run until `cond` holds (requests reach the gate through a few awaits). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}

describe('a burst of searches beyond the limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      SVC_API_KEYS: 'ka=alpha,kb=beta',
      SVC_MAX_HEAVY: '1',
      SVC_HEAVY_QUEUE: '2',
      SVC_HEAVY_QUEUE_PER_KEY: '2',
      SVC_HEAVY_MAX_WAIT_MS: '3600000',
    });
    const nodes = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}`, kind: 'claim', statement: `harvest report ${i}` }));
    expect((await t.call('POST', '/v1/memories', { key: 'ka', body: { space: 'user:1', nodes } })).status).toBe(200);
  });
  afterAll(() => t.close());

  it('REST: the excess gets 503 with Retry-After at once; lists, gets and writes in the same burst all succeed', async () => {
    const held = await holdSlots(t);
    const searches = Array.from({ length: 6 }, () => search(t, 'ka'));
    const light = [
      ...Array.from({ length: 4 }, () => t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: 'now', limit: 5 } })),
      ...Array.from({ length: 4 }, (_, i) => t.call('GET', `/v1/memories/n${i}`, { key: 'ka', query: { as_of: 'now' } })),
      ...Array.from({ length: 4 }, (_, i) =>
        t.call('POST', '/v1/memories', {
          key: 'ka',
          body: { space: 'user:1', nodes: [{ id: `w${i}`, kind: 'claim', statement: 'burst write' }] },
        }),
      ),
    ];
    // The light requests are answered while the slot is still held: they never wait behind searches.
    const lightAnswers = await Promise.all(light);
    expect(lightAnswers.map((a) => a.status)).toEqual(lightAnswers.map(() => 200));
    await until(() => gate(t).stats().heavyQueued === 2);
    for (const h of held) h.release();
    const answers = await Promise.all(searches);
    const shed = answers.filter((a) => a.status === 503);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(shed).toHaveLength(4);
    for (const a of shed) {
      expect(a.json.detail.error).toBe('overloaded');
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(a.json.detail.retry_after).toBe(Number(a.headers.get('retry-after')));
      expect(a.json.detail.why).toMatch(/busy.*retry after \d+ s/);
    }
  });

  it('a search in a space searched in memory takes no heavy slot: answered while the slots are held', async () => {
    const inSpace = (): Promise<{ status: number; json: any }> =>
      t.call('POST', '/v1/search', { key: 'ka', body: { query: 'harvest', as_of: 'now', space: 'user:1' } });
    // The first search of the space loads its copy, which takes a heavy slot.
    expect((await inSpace()).status).toBe(200);
    const index = t.started.services.search;
    expect(index?.searchIsLight('alpha', 'user:1')).toBe(true);
    expect(index?.searchIsLight('alpha', 'user:2')).toBe(false);
    const held = await holdSlots(t);
    try {
      const answer = await inSpace();
      expect(answer.status).toBe(200);
      expect(answer.json.results.length).toBeGreaterThan(0);
      expect(gate(t).stats()).toMatchObject({ heavyQueued: 0, heavyRunning: 1 });
    } finally {
      for (const h of held) h.release();
    }
  });

  it('the first search of a small space (its size known from its copy’s file or its read model) takes no heavy slot', async () => {
    const nodes = Array.from({ length: 5 }, (_, i) => ({ id: `s${i}`, kind: 'claim', statement: `harvest note ${i}` }));
    expect((await t.call('POST', '/v1/memories', { key: 'ka', body: { space: 'user:3', nodes } })).status).toBe(200);
    expect((await t.call('GET', '/v1/memories?as_of=now&space=user:3', { key: 'ka' })).status).toBe(200); // its read model
    const index = t.started.services.search!;
    await index.caughtUp('alpha'); // its rows in the table, none waiting to be embedded
    // No copy of it in memory, but its copy's file, begun with its first rows, says it is small.
    expect(index.searchIsLight('alpha', 'user:3')).toBe(true);
    expect(index.searchIsLight('alpha', 'user:3', 5)).toBe(true);
    expect(index.searchIsLight('alpha', 'user:3', 301)).toBe(false);
    const held = await holdSlots(t);
    try {
      let answer: { status: number; json: any } | undefined;
      void t.call('POST', '/v1/search', { key: 'ka', body: { query: 'harvest', as_of: 'now', space: 'user:3' } }).then((a) => (answer = a));
      // Its copy's load reads LanceDB: more turns of the loop than `until` gives, so a wait in time (30 s at most).
      for (let i = 0; i < 3000 && answer === undefined && gate(t).stats().heavyQueued === 0; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(gate(t).stats().heavyQueued).toBe(0);
      expect(answer?.status).toBe(200);
      expect(answer?.json.results.length).toBe(5);
    } finally {
      for (const h of held) h.release();
    }
  });

  it('REST: a key past its share of the queue gets 429 with Retry-After while another key still queues', async () => {
    await t.close();
    t = await startTestApp({
      SVC_API_KEYS: 'ka=alpha,kb=beta',
      SVC_MAX_HEAVY: '1',
      SVC_HEAVY_QUEUE: '4',
      SVC_HEAVY_QUEUE_PER_KEY: '2',
      SVC_HEAVY_MAX_WAIT_MS: '3600000',
    });
    const held = await holdSlots(t);
    const flood = Array.from({ length: 4 }, () => search(t, 'ka'));
    await until(() => gate(t).stats().heavyQueued === 2 && gate(t).stats().shed === 2);
    const other = search(t, 'kb');
    await until(() => gate(t).stats().heavyQueued === 3);
    for (const h of held) h.release();
    const answers = await Promise.all(flood);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429, 429]);
    const refused = answers.find((a) => a.status === 429);
    expect(refused?.json.detail.error).toBe('over_share');
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await other).status).toBe(200);
  });

  it('MCP: the excess gets a readable isError result saying to retry, not a transport failure', async () => {
    const held = await holdSlots(t);
    const calls = Array.from({ length: 8 }, () => mcpCall(t, 'ka', 'search_memory', { query: 'harvest', as_of: 'now' }));
    const list = await mcpCall(t, 'ka', 'list_memories', { as_of: 'now', limit: 3 });
    expect(list.result.isError).toBeFalsy();
    await until(() => gate(t).stats().shed >= 6);
    for (const h of held) h.release();
    const answers = await Promise.all(calls);
    for (const a of answers) expect(a.error).toBeUndefined();
    const busy = answers.filter((a) => a.result.isError);
    expect(busy.length).toBeGreaterThanOrEqual(6);
    for (const a of busy) {
      const text = a.result.content[0].text as string;
      expect(text).toMatch(/^(overloaded|over_share): .*retry after \d+ s/);
      // No structuredContent on an error (strict clients hold it to the output schema); the code and the
      // retry-after travel in _meta, without an HTTP status.
      expect(a.result.structuredContent).toBeUndefined();
      const meta = a.result._meta[ERROR_META_KEY];
      expect(['overloaded', 'over_share']).toContain(meta.error);
      expect(meta.retry_after).toBeGreaterThanOrEqual(1);
    }
    expect(answers.filter((a) => !a.result.isError).every((a) => Array.isArray(a.result.structuredContent.results))).toBe(true);
  });
});

describe('fairness between keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      SVC_API_KEYS: 'ka=alpha,kb=beta',
      SVC_MAX_HEAVY: '1',
      SVC_HEAVY_QUEUE: '16',
      SVC_HEAVY_QUEUE_PER_KEY: '12',
      SVC_HEAVY_MAX_WAIT_MS: '3600000',
    });
    for (const key of ['ka', 'kb'])
      await t.call('POST', '/v1/memories', { key, body: { space: 'user:1', nodes: [{ id: 'n0', kind: 'claim', statement: 'harvest' }] } });
  });
  afterAll(() => t.close());

  it("one key's flood of searches does not put another key's search behind it: turns alternate", async () => {
    const held = await holdSlots(t);
    const order: string[] = [];
    const tagged = (key: string, i: number) => search(t, key).then((a) => (order.push(`${key}${i}`), a));
    const flood = Array.from({ length: 8 }, (_, i) => tagged('ka', i));
    await until(() => gate(t).stats().heavyQueued === 8);
    const other = tagged('kb', 0);
    await until(() => gate(t).stats().heavyQueued === 9);
    // B's reads are not queued at all while A's flood waits.
    expect((await t.call('GET', '/v1/memories', { key: 'kb', query: { as_of: 'now' } })).status).toBe(200);
    for (const h of held) h.release();
    const answers = await Promise.all([...flood, other]);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // One slot: answers come in the order turns were given. B arrived ninth and is served second.
    expect(order.indexOf('kb0')).toBe(1);
  });
});

describe('deadlines', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_MAX_HEAVY: '1', SVC_HEAVY_QUEUE: '4', SVC_REQUEST_TIMEOUT_MS: '100' });
  });
  afterAll(() => t.close());

  it('a search still queued at its deadline is cancelled: 504 with Retry-After, out of the queue, never run', async () => {
    const held = await holdSlots(t);
    const answer = await search(t, 'unused');
    expect(answer.status).toBe(504);
    expect(answer.json.detail.error).toBe('deadline_exceeded');
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(gate(t).stats()).toMatchObject({ heavyQueued: 0, heavyRunning: 1, timedOut: 1 });
    for (const h of held) h.release();
    // Nothing was left waiting to start once the slot came free.
    await new Promise((r) => setImmediate(r));
    expect(gate(t).stats()).toMatchObject({ heavyQueued: 0, heavyRunning: 0, inFlight: 0 });
  });
});

/** A POST whose body never ends: a server that tried to read it would never answer. */
function postEndless(t: TestApp, path: string, headers: Record<string, string> = {}): Promise<Response> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"query": "harvest", '));
    },
  });
  return Promise.resolve(
    t.app.request(`http://ledger.test${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer ka', 'content-type': 'application/json', ...headers },
      body,
      duplex: 'half',
    } as RequestInit),
  );
}

describe('overload answered before the body is read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_API_KEYS: 'ka=alpha', SVC_MAX_HEAVY: '1', SVC_HEAVY_QUEUE: '1', SVC_MAX_REQUESTS: '2' });
  });
  afterAll(() => t.close());

  const post = (path: string, headers: Record<string, string> = {}): Promise<Response> => postEndless(t, path, headers);

  it('an always-heavy request meeting a full heavy queue gets 503 + Retry-After before its input is read', async () => {
    const held = await holdSlots(t);
    const queued = search(t, 'ka');
    await until(() => gate(t).stats().heavyQueued === 1);
    const shedBefore = gate(t).stats().shed;
    // Without as_of this would be a 400: the refusal comes before the input is looked at.
    const res = await t.app.request('http://ledger.test/v1/memories/n1/why', { headers: { authorization: 'Bearer ka' } });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as any).detail.error).toBe('overloaded');
    expect(gate(t).stats().shed).toBe(shedBefore + 1);
    for (const h of held) h.release();
    expect((await queued).status).toBe(200);
    expect(gate(t).stats()).toMatchObject({ arrived: 0, inFlight: 0 });
  });

  it('over SVC_MAX_REQUESTS every operation route is refused unread; MCP gets an isError result; open routes still answer', async () => {
    const held = [gate(t).arrive(false), gate(t).arrive(false)];
    const list = await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: 'now' } });
    expect(list.status).toBe(503);
    expect(list.json.detail.why).toMatch(/2 requests are in flight/);
    expect((await post('/v1/memories')).status).toBe(503);
    const rpc = await mcpCall(t, 'ka', 'list_memories', { as_of: 'now' });
    expect(rpc.id).toBe(1);
    expect(rpc.result.isError).toBe(true);
    expect(rpc.result.content[0].text).toMatch(/^overloaded: .*retry after \d+ s/);
    expect(rpc.result._meta[ERROR_META_KEY].retry_after).toBeGreaterThanOrEqual(1);
    // An MCP body too large to peek at is refused unread, as HTTP 503 with a JSON-RPC error.
    const big = await post('/mcp', { accept: 'application/json, text/event-stream', 'content-length': String(1 << 20) });
    expect(big.status).toBe(503);
    expect(((await big.json()) as any).error.message).toMatch(/^overloaded/);
    expect((await t.app.request('http://ledger.test/v1/version')).status).toBe(200);
    for (const h of held) h.release();
    expect((await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: 'now' } })).status).toBe(200);
  });
});

describe('a search refused before it is read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_API_KEYS: 'ka=alpha', SVC_MAX_HEAVY: '1', SVC_MAX_SEARCHES: '1', SVC_HEAVY_QUEUE: '1' });
  });
  afterAll(() => t.close());

  const endlessSearch = (): Promise<Response> => postEndless(t, '/v1/search');

  it('while both queues a search may wait in are full, a search gets 503 + Retry-After unread; a list is answered', async () => {
    const heavy = await gate(t).admit('holder', 'heavy');
    const heavyQueued = gate(t).admit('holder', 'heavy');
    const searching = await gate(t).admit('holder', 'search');
    const searchQueued = gate(t).admit('holder', 'search');
    const shed = gate(t).stats().shed;
    const refused = await endlessSearch();
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as any).detail.why).toMatch(/searches and other expensive requests wait/);
    expect(gate(t).stats().shed).toBe(shed + 1);
    // A list is not a search: answered.
    expect((await t.call('GET', '/v1/memories', { key: 'ka', query: { as_of: 'now' } })).status).toBe(200);
    searching.release();
    (await searchQueued).release();
    heavy.release();
    (await heavyQueued).release();
    expect((await search(t, 'ka')).status).toBe(200);
  });
});

describe('overload answered by the HTTP listener, before the app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_API_KEYS: 'ka=alpha', SVC_MAX_HEAVY: '1', SVC_MAX_REQUESTS: '2' });
  });
  afterAll(() => t.close());

  it('refuses a REST operation over SVC_MAX_REQUESTS with 503 + Retry-After without calling the app, and keeps the connection', async () => {
    const reached: string[] = [];
    const server = createServerShedding(() => gate(t))({}, (req, res) => {
      reached.push(`${req.method} ${req.url}`);
      res.end('app');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body?: string) =>
      new Promise<{ status: number; headers: IncomingMessage['headers']; text: string; reused: boolean }>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method, path, agent, headers: { 'content-type': 'application/json' } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      // Below the ceiling everything reaches the app, and nothing is counted in or shed here.
      const shed0 = gate(t).stats().shed;
      expect((await send('GET', '/v1/memories?as_of=now')).text).toBe('app');
      expect(gate(t).stats()).toMatchObject({ arrived: 0, shed: shed0 });

      const held = [gate(t).arrive(false), gate(t).arrive(false)];
      const refused = await send('POST', '/v1/search', JSON.stringify({ query: 'harvest', as_of: 'now' }));
      expect(refused.status).toBe(503);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused.headers['content-type']).toBe('application/json');
      expect(JSON.parse(refused.text).detail).toMatchObject({
        error: 'overloaded',
        why: expect.stringMatching(/2 requests are in flight/),
      });
      expect(gate(t).stats().shed).toBe(shed0 + 1);
      // Open routes and MCP (whose refusal names the JSON-RPC id) go on to the app.
      expect((await send('GET', '/v1/version')).text).toBe('app');
      expect((await send('POST', '/mcp', '{}')).text).toBe('app');
      expect(reached).toEqual(['GET /v1/memories?as_of=now', 'GET /v1/version', 'POST /mcp']);

      for (const h of held) h.release();
      // The refused request's body was drained: the same connection carries the next request to the app.
      const after = await send('POST', '/v1/search', JSON.stringify({ query: 'harvest', as_of: 'now' }));
      expect(after.text).toBe('app');
      expect(after.reused).toBe(true);
    } finally {
      agent.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});
