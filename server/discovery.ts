// Discovery before connecting: the MCP server card (SEP-2127) at /.well-known/mcp/server-card.json, open
// and free of tenant data. It names this server, its version, the /mcp endpoint as the client reached
// this host (behind a proxy, from X-Forwarded-Proto/Host), and whether that endpoint wants a key. The
// same identity is in server.json at the package root, for the MCP registry.
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { Hono } from 'hono';
import type { RestEnv } from '../bridge/rest.ts';
import type { Config } from './config.ts';
import { SERVICE_VERSION } from './version.ts';

export const SERVER_CARD_PATH = '/.well-known/mcp/server-card.json';
/** The registry name (reverse-DNS, one slash); server.json and package.json's mcpName say the same. */
export const REGISTRY_NAME = 'io.github.memory-ledger/memory-ledger';
const DESCRIPTION = 'A time-aware, append-only memory ledger for AI agents: MCP and REST over Kuzu and LanceDB.';

const first = (v: string | null | undefined): string | undefined => v?.split(',')[0]?.trim() || undefined;

/** The origin the client used: the proxy's forwarded scheme and host when present, else the request's own. */
export function clientOrigin(request: Request): string {
  const url = new URL(request.url);
  const proto = first(request.headers.get('x-forwarded-proto')) ?? url.protocol.replace(/:$/, '');
  const host = first(request.headers.get('x-forwarded-host')) ?? request.headers.get('host') ?? url.host;
  const safeProto = proto === 'https' || proto === 'http' ? proto : 'http';
  // A forwarded host is the client's word: keep it to host[:port] characters, never a path or a scheme.
  const safeHost = /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? host : url.host;
  const prefix = first(request.headers.get('x-forwarded-prefix'))?.replace(/\/+$/, '') ?? '';
  return `${safeProto}://${safeHost}${/^(\/[\w.~-]+)*$/.test(prefix) ? prefix : ''}`;
}

export function serverCard(origin: string, keyRequired: boolean): Record<string, unknown> {
  const remote: Record<string, unknown> = {
    type: 'streamable-http',
    url: `${origin}/mcp`,
    supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
  };
  if (keyRequired)
    remote.headers = [
      { name: 'Authorization', description: 'Bearer <API_KEY>: the key selects the tenant', isRequired: true, isSecret: true },
    ];
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
    name: REGISTRY_NAME,
    title: 'Memory ledger',
    version: SERVICE_VERSION,
    description: DESCRIPTION,
    remotes: [remote],
    _meta: {
      'memory-ledger/auth': { keyRequired },
      'memory-ledger/links': { ui: `${origin}/ui`, docs: `${origin}/docs`, openapi: `${origin}/v1/openapi.json` },
    },
  };
}

export function mountDiscovery(app: Hono<RestEnv>, config: Config): void {
  const keyRequired = config.apiKeys !== null;
  app.get(SERVER_CARD_PATH, (c) => {
    const res = c.json(serverCard(clientOrigin(c.req.raw), keyRequired));
    res.headers.set('access-control-allow-origin', '*');
    res.headers.set('cache-control', 'public, max-age=300');
    return res;
  });
}

/** The start-up lines naming where each door is, for a server listening at `base`. */
export function addressLines(base: string): string[] {
  return [`  MCP:  ${base}/mcp`, `  UI:   ${base}/ui`, `  docs: ${base}/docs (REST at ${base}/v1)`];
}
