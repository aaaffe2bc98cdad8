// Memory per MCP request is bounded only if nothing of a request outlives it: the door is stateless, so
// after its answer no server, transport, session or context built for it may still reach the request.
// Each request and its abort signal (the one the request's context carries to the operation) is watched
// through a WeakRef; after the answers and a full collection none may still be alive. Counted, not timed.
import { runInNewContext } from 'node:vm';
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';

const KEY = 'per-request-key';
const N = 40;

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: `${KEY}=alpha` });
  const r = await t.call('POST', '/v1/memories', {
    key: KEY,
    body: { space: 'user:a', nodes: [{ id: 'a1', kind: 'claim', statement: 'Coffee prices rose after the frost in Minas' }] },
  });
  expect(r.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** Every kind of MCP request the door answers differently: the tool-call fast path, the SDK's server, an error. */
function body(i: number): unknown {
  const call = (name: string, args: Record<string, unknown>): unknown => ({
    jsonrpc: '2.0',
    id: i,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  switch (i % 5) {
    case 0:
      return call('search_memory', { as_of: 'now', space: 'user:a', query: 'coffee frost' });
    case 1:
      return call('list_memories', { as_of: 'now', space: 'user:a' });
    case 2:
      return { jsonrpc: '2.0', id: i, method: 'tools/list', params: {} };
    case 3:
      return {
        jsonrpc: '2.0',
        id: i,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      };
    default:
      return call('get_memory', { id: 'a1' }); // no as_of: an isError result
  }
}

/** Sends one request through the app and returns weak handles on what belonged to it alone. */
async function send(i: number, path: string): Promise<WeakRef<object>[]> {
  const request = new Request(`http://ledger.test${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(body(i)),
  });
  const res = await t.app.fetch(request);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(text).toContain(`"id":${i}`);
  return [new WeakRef(request), new WeakRef(request.signal), new WeakRef(res)];
}

/** Collects until what is unreachable is gone (a WeakRef made in a job keeps its target to the job's end). */
async function collect(): Promise<void> {
  for (let k = 0; k < 4; k++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
}

describe('an MCP request leaves nothing behind', () => {
  for (const path of ['/mcp', '/mcp/app/user%3Aa']) {
    it(`after ${N} requests to ${path}, none of them, their signals or answers is still reachable`, async () => {
      const watched: WeakRef<object>[] = [];
      for (let i = 0; i < N; i++) watched.push(...(await send(i, path)));
      const before = watched.filter((w) => w.deref() !== undefined).length;
      expect(before).toBeGreaterThan(0); // the check could fail: they are alive until collected
      await collect();
      const alive = watched.filter((w) => w.deref() !== undefined).length;
      expect(alive).toBe(0);
    });
  }
});
