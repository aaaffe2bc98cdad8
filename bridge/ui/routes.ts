// The ledger browser's door: GET /ui (a static shell) and its assets. Nothing here reads the ledger or
// carries tenant data, so these routes are open even on a hosted server; the page itself reads the
// public REST API from the browser with the user's key. Files are a fixed list read once at mount, so
// no request path ever reaches the file system (no traversal to guard against).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Env, Hono } from 'hono';
import { UI_SHELL } from './shell.ts';

const ASSETS = join(import.meta.dirname, 'assets');

/** Served names → where they live and how they are typed. Everything the page loads is listed here. */
const FILES: Record<string, { path: string; type: string }> = {
  'style.css': { path: join(ASSETS, 'style.css'), type: 'text/css; charset=utf-8' },
  'app.js': { path: join(ASSETS, 'app.js'), type: 'text/javascript; charset=utf-8' },
  'api.js': { path: join(ASSETS, 'api.js'), type: 'text/javascript; charset=utf-8' },
  'dom.js': { path: join(ASSETS, 'dom.js'), type: 'text/javascript; charset=utf-8' },
  'state.js': { path: join(ASSETS, 'state.js'), type: 'text/javascript; charset=utf-8' },
  'words.js': { path: join(ASSETS, 'words.js'), type: 'text/javascript; charset=utf-8' },
  'time.js': { path: join(ASSETS, 'time.js'), type: 'text/javascript; charset=utf-8' },
  'blocks.js': { path: join(ASSETS, 'blocks.js'), type: 'text/javascript; charset=utf-8' },
  'block.js': { path: join(ASSETS, 'block.js'), type: 'text/javascript; charset=utf-8' },
  'graph.js': { path: join(ASSETS, 'graph.js'), type: 'text/javascript; charset=utf-8' },
  'search.js': { path: join(ASSETS, 'search.js'), type: 'text/javascript; charset=utf-8' },
  'facts.js': { path: join(ASSETS, 'facts.js'), type: 'text/javascript; charset=utf-8' },
  // The graph library comes from node_modules, served by us: the page works offline, no CDN.
  'vendor/cytoscape.min.js': {
    path: createRequire(import.meta.url).resolve('cytoscape/dist/cytoscape.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
};

/**
 * Scripts only from this origin and never inline; no other origin for anything; no framing. Styles are
 * ours too: the page sets element styles only through the CSSOM, which CSP does not govern.
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': UI_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

// Read once per process (tests build many apps), on the first mount.
let bodies: Map<string, { body: Buffer; type: string }> | null = null;

function files(): Map<string, { body: Buffer; type: string }> {
  if (!bodies) {
    bodies = new Map();
    for (const [name, f] of Object.entries(FILES)) bodies.set(name, { body: readFileSync(f.path), type: f.type });
  }
  return bodies;
}

export function mountUi<E extends Env>(app: Hono<E>): void {
  const served = files();
  const shell = (): Response => new Response(UI_SHELL, { headers: { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' } });
  app.get('/ui', shell);
  app.get('/ui/', shell);
  app.get('/ui/*', (c, next) => {
    const file = served.get(c.req.path.slice('/ui/'.length));
    if (!file) return next();
    return new Response(new Uint8Array(file.body), { headers: { ...SECURITY_HEADERS, 'content-type': file.type } });
  });
}
