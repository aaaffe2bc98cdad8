// The open documentation routes: the OpenAPI document at /v1/openapi.json and an API reference page at
// /docs, rendered by Swagger UI served from our own node_modules (no CDN: the page works offline and
// loads nothing from another origin). The Content-Security-Policy forbids inline scripts and every other
// origin, so the page boots from a served file (docs-assets/boot.js).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import { OPENAPI_PATH, openApiDocument } from './openapi.ts';
import type { RestEnv } from './rest.ts';

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes from script; styles cannot run code, scripts stay locked.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const OWN_DIR = join(dirname(fileURLToPath(import.meta.url)), 'docs-assets');

/** The Swagger UI files the page loads, and nothing else of the package. */
const UI_FILES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

function uiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

const files = new Map<string, Buffer>();

/** A file's bytes, read once: they do not change while the server runs. */
function bytesOf(path: string): Buffer {
  let b = files.get(path);
  if (!b) {
    b = readFileSync(path);
    files.set(path, b);
  }
  return b;
}

function fileResponse(path: string, type: string): Response {
  return new Response(new Uint8Array(bytesOf(path)), {
    headers: {
      'content-type': type,
      'content-security-policy': DOCS_CSP,
      'x-content-type-options': 'nosniff',
      'cache-control': 'public, max-age=3600',
    },
  });
}

/** Mounts the open documentation routes; call before the authentication middleware of /v1. */
export function mountDocs(app: Hono<RestEnv>, version: string): void {
  app.get(OPENAPI_PATH, (c) => c.json(openApiDocument(version)));
  app.get('/docs', () => fileResponse(join(OWN_DIR, 'index.html'), 'text/html; charset=utf-8'));
  app.get('/docs/boot.js', () => fileResponse(join(OWN_DIR, 'boot.js'), 'text/javascript; charset=utf-8'));
  app.get('/docs/assets/:file', (c) => {
    const name = c.req.param('file');
    const type = UI_FILES[name];
    return type ? fileResponse(join(uiDir(), name), type) : c.notFound();
  });
}
