// MCP clients for the tests (the SDK's own client, over each transport) and the REST twin of a tool call,
// so one case can be asserted through both doors.
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { serve, type ServerType } from '@hono/node-server';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { routes } from '../../bridge/routes.ts';
import { createLedgerMcpServer } from '../../server/mcp/tools.ts';
import type { Context } from '../../tools/context.ts';
import type { TestApp } from './app.ts';

export async function inMemoryClient(ctx: Context): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createLedgerMcpServer(ctx).connect(serverSide);
  const client = new Client({ name: 'ledger-test', version: '1' });
  await client.connect(clientSide);
  return client;
}

export async function httpClient(url: string, key?: string): Promise<Client> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const client = new Client({ name: 'ledger-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The test app on a real HTTP port (node-server), for clients that speak HTTP. */
export async function listen(t: TestApp): Promise<{ base: string; close(): Promise<void> }> {
  const server: ServerType = await new Promise((res) => {
    const s = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => res(s));
  });
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, close: () => new Promise((res) => server.close(() => res())) };
}

export interface RestAnswer {
  status: number;
  json: any;
  bytes: Buffer;
}

/** The REST request for the same operation and input: path params filled in, the rest as query or body. */
export async function restCall(t: TestApp, operation: string, input: Record<string, unknown>, key?: string): Promise<RestAnswer> {
  const route = routes.find((r) => r.operation === operation);
  if (!route) throw new Error(`no REST route for ${operation}`);
  const rest = { ...input };
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
    const v = rest[name];
    delete rest[name];
    return encodeURIComponent(String(v));
  });
  const url = new URL(`http://ledger.test${path}`);
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  let body: string | undefined;
  if (route.from === 'query') {
    for (const [k, v] of Object.entries(rest)) if (v !== undefined) url.searchParams.set(k, Array.isArray(v) ? v.join(',') : String(v));
  } else {
    body = JSON.stringify(rest);
    headers['content-type'] = 'application/json';
  }
  const res = await t.app.request(url.toString(), { method: route.method, headers, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: unknown = null;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = null;
  }
  return { status: res.status, json, bytes };
}

/** Drops what differs between two calls by design: the instant the server answered. */
export function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'tx_as_of') out[k] = stable(v);
    return out;
  }
  return value;
}

/** The files of a .tar.gz (ustar headers: name at 0, octal size at 124, 512-byte blocks). */
export function untarGz(gz: Buffer): Map<string, string> {
  const tar = gunzipSync(gz);
  const files = new Map<string, string>();
  for (let off = 0; off + 512 <= tar.length;) {
    const header = tar.subarray(off, off + 512);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    if (!name) break;
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 48);
    if (type === '0' || type === '\0')
      files.set(prefix ? `${prefix}/${name}` : name, tar.subarray(off + 512, off + 512 + size).toString('utf8'));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
