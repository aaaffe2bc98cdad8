// Discovery before connecting: the server card is open, names no tenant, carries package.json's version,
// the /mcp URL as the client reached the host (proxies included) and whether a key is required; server.json
// for the MCP registry says the same name and version and ships in the package.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressLines, REGISTRY_NAME, SERVER_CARD_PATH } from '../server/discovery.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
  mcpName: string;
  files: string[];
};

let open: TestApp;
let hosted: TestApp;
beforeAll(async () => {
  open = await startTestApp({ SVC_TENANT: 'secret-tenant-name' });
  hosted = await startTestApp({ SVC_API_KEYS: 'k-discovery=acme-tenant' });
});
afterAll(async () => {
  await open?.close();
  await hosted?.close();
});

async function card(
  t: TestApp,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; text: string; cors: string | null }> {
  const res = await t.app.request(`http://ledger.test${SERVER_CARD_PATH}`, { headers });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text), text, cors: res.headers.get('access-control-allow-origin') };
}

describe('GET /.well-known/mcp/server-card.json', () => {
  it('is open and names the server, its version and its /mcp endpoint as the client reached it', async () => {
    const c = await card(open, { host: 'memory.example:8787' });
    expect(c.status).toBe(200);
    expect(c.cors).toBe('*');
    expect(c.json).toMatchObject({ name: REGISTRY_NAME, version: pkg.version });
    expect(c.json.remotes).toEqual([expect.objectContaining({ type: 'streamable-http', url: 'http://memory.example:8787/mcp' })]);
    expect(c.json.remotes[0].headers).toBeUndefined();
    expect(c.json._meta['memory-ledger/auth']).toEqual({ keyRequired: false });
    expect(c.text).not.toContain('secret-tenant-name');
  });

  it('behind a proxy, uses the forwarded scheme and host; a hostile forwarded host is not echoed', async () => {
    const c = await card(open, { host: 'internal:8787', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'ledger.example.org' });
    expect(c.json.remotes[0].url).toBe('https://ledger.example.org/mcp');
    const bad = await card(open, { host: 'internal:8787', 'x-forwarded-host': 'evil.example/"><script>' });
    expect(bad.json.remotes[0].url).not.toContain('evil');
  });

  it('on a hosted server, is still open and says a key is required, naming no tenant', async () => {
    const c = await card(hosted);
    expect(c.status).toBe(200);
    expect(c.json._meta['memory-ledger/auth']).toEqual({ keyRequired: true });
    expect(c.json.remotes[0].headers).toEqual([expect.objectContaining({ name: 'Authorization', isRequired: true, isSecret: true })]);
    expect(c.text).not.toContain('acme');
    expect((await hosted.call('GET', '/v1/memories', { query: { as_of: 'now' } })).status).toBe(401);
  });
});

describe('server.json and the start-up log', () => {
  it('server.json names the package and its version, and ships in the package', () => {
    const server = JSON.parse(readFileSync(new URL('../server.json', import.meta.url), 'utf8')) as any;
    expect(server.name).toBe(REGISTRY_NAME);
    expect(pkg.mcpName).toBe(REGISTRY_NAME);
    expect(server.version).toBe(pkg.version);
    expect(server.packages[0]).toMatchObject({ registryType: 'npm', identifier: 'memory-ledger', version: pkg.version });
    expect(pkg.files).toContain('server.json');
  });

  it('names the /mcp, /ui and /docs addresses', () => {
    const lines = addressLines('http://127.0.0.1:8787').join('\n');
    for (const path of ['/mcp', '/ui', '/docs']) expect(lines).toContain(`http://127.0.0.1:8787${path}`);
  });
});
