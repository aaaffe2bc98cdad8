// Which space an app-scoped MCP address confines a request to, and when an address is its own secret;
// read by the door (./http.ts), the HTTP threads (server/fronts/) and the cluster's gate.

/** `svc:<uuid>`: a space whose address is its own secret on a hosted deployment. */
export const SECRET_SPACE = /^svc:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Scope {
  app: string;
  space: string;
}

/**
 * `/mcp/<app>/<space>`, or its alias `/apps/<app>/<space>/mcp` for clients that rewrite an address not
 * ending in `/mcp`, with both segments percent-decoded (a space may hold `/` as %2F); else null.
 */
export function scopeOf(pathname: string): Scope | null {
  const parts = pathname.replace(/\/+$/, '').split('/');
  let segments: string[];
  if (parts.length === 4 && parts[1] === 'mcp') segments = parts.slice(2);
  else if (parts.length === 5 && parts[1] === 'apps' && parts[4] === 'mcp') segments = parts.slice(2, 4);
  else return null;
  try {
    const [app, space] = segments.map((s) => decodeURIComponent(s));
    return app && space ? { app, space } : null;
  } catch {
    return null;
  }
}

export const isLocalBind = (host: string): boolean => ['127.0.0.1', 'localhost', '::1'].includes(host);
