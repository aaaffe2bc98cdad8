// The MCP door of an open local server (no keys): every address opens in the SVC_TENANT tenant, and since
// no key stands between a web page and the server, a browser request from a foreign origin is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInstant } from '../storage/time.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SVC_TENANT: 'solo' });
});

afterAll(async () => {
  await t?.close();
});

async function rpc(
  path: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await t.app.request(`http://127.0.0.1${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

describe('MCP on an open server', () => {
  it('opens /mcp and any app address without a key, in the SVC_TENANT tenant', async () => {
    const w = await rpc('/mcp/desk/user%3Ao', 'tools/call', {
      name: 'remember',
      arguments: { nodes: [{ id: 'o1', kind: 'claim', statement: 'open door' }] },
    });
    expect(w.status).toBe(200);
    expect(w.body.result.structuredContent.accepted).toBe(1);
    const g = await rpc('/mcp', 'tools/call', { name: 'get_memory', arguments: { id: 'o1', as_of: formatInstant(t.ledger.now()) } });
    expect(g.body.result.structuredContent.item).toMatchObject({ id: 'o1', tenant: 'solo', space: 'user:o' });
    const svc = await rpc('/mcp/desk/svc%3A00000000-1111-4222-8333-444444444444', 'tools/list', {});
    expect(svc.status).toBe(200);
    expect(svc.body.result.tools.length).toBeGreaterThan(0);
  });

  it('refuses a browser request from a foreign origin, and serves a local one', async () => {
    const foreign = await rpc('/mcp', 'tools/list', {}, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const local = await rpc('/mcp', 'tools/list', {}, { origin: 'http://localhost:5173' });
    expect(local.status).toBe(200);
  });
});
