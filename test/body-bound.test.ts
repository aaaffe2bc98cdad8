// Bodies over SVC_MAX_BODY_BYTES on a real HTTP port, through both doors: a declared length over the bound,
// and a chunked upload (no declared length) that passes it, are refused with 413; a chunked body within the
// bound is read whole.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { listen } from './helpers/mcp-client.ts';

const MAX = 4096;
let t: TestApp;
let http: { base: string; close(): Promise<void> };

beforeAll(async () => {
  t = await startTestApp({ SVC_MAX_BODY_BYTES: String(MAX) });
  http = await listen(t);
});

afterAll(async () => {
  await http.close();
  await t.close();
});

/** POSTs the chunks one write each; without `length` Node sends them chunked, with no declared length. */
function post(path: string, chunks: string[], length?: number): Promise<{ status: number; body: string; chunked: boolean }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (length !== undefined) headers['content-length'] = String(length);
    const req = request(`${http.base}${path}`, { method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, chunked: req.getHeader('content-length') === undefined }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

const toolCall = (args: Record<string, unknown>): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'remember', arguments: args } });

/** The same JSON text cut into pieces of `size` characters. */
const pieces = (text: string, size: number): string[] =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

describe('request bodies and SVC_MAX_BODY_BYTES', () => {
  it('reads a chunked body within the bound whole, over MCP and over REST', async () => {
    const mcp = await post(
      '/mcp',
      pieces(toolCall({ space: 'user:a', nodes: [{ id: 'm1', kind: 'claim', statement: 'sent in pieces' }] }), 40),
    );
    expect(mcp.chunked).toBe(true);
    expect(mcp.status).toBe(200);
    expect(JSON.parse(mcp.body).result.isError).toBeFalsy();
    const rest = await post(
      '/v1/memories',
      pieces(JSON.stringify({ space: 'user:a', nodes: [{ id: 'r1', kind: 'claim', statement: 'also in pieces' }] }), 40),
    );
    expect(rest.status).toBe(200);
    const listed = await t.call('GET', '/v1/memories', { query: { as_of: 'now', space: 'user:a' } });
    expect(listed.json.items.map((n: { id: string }) => n.id).sort()).toEqual(['m1', 'r1']);
  });

  it('refuses a chunked body that passes the bound with 413, and stores nothing of it', async () => {
    const statement = 'z'.repeat(MAX);
    const mcp = await post('/mcp', pieces(toolCall({ space: 'user:b', nodes: [{ id: 'big', kind: 'claim', statement }] }), 1000));
    expect(mcp.chunked).toBe(true);
    expect(mcp.status).toBe(413);
    expect(JSON.parse(mcp.body).error.message).toMatch(/Payload Too Large/);
    const rest = await post(
      '/v1/memories',
      pieces(JSON.stringify({ space: 'user:b', nodes: [{ id: 'big', kind: 'claim', statement }] }), 1000),
    );
    expect(rest.status).toBe(413);
    expect(JSON.parse(rest.body).detail.error).toBe('payload_too_large');
    const listed = await t.call('GET', '/v1/memories', { query: { as_of: 'now', space: 'user:b' } });
    expect(listed.json.items).toEqual([]);
  });

  it('refuses a declared length over the bound with 413', async () => {
    const body = toolCall({ space: 'user:c', nodes: [{ id: 'big', kind: 'claim', statement: 'z'.repeat(MAX) }] });
    const mcp = await post('/mcp', [body], Buffer.byteLength(body));
    expect(mcp.chunked).toBe(false);
    expect(mcp.status).toBe(413);
  });
});
