// The ledger browser's door without a browser (runs where Chromium is missing too): the page and its
// files are open on a hosted server, carry the CSP, and nothing outside the fixed file list is served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: 'ui-routes-key=acme' });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /ui', () => {
  it('serves the shell and every file it names without a key, each with the CSP', async () => {
    const shell = await t.app.request('/ui');
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await shell.text();
    const names = [...html.matchAll(/(?:href|src)="(\/ui\/[^"]+)"/g)].map((m) => m[1] ?? '');
    expect(names).toContain('/ui/app.js');
    for (const path of [...names, '/ui/vendor/cytoscape.min.js']) {
      const r = await t.app.request(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-security-policy'), path).toMatch(/script-src 'self'(;|$)/);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.toMatch(/\sstyle=|<style/); // no inline style
  });

  it('serves nothing outside its list and still guards the API', async () => {
    for (const path of [
      '/ui/../package.json',
      '/ui/%2e%2e/package.json',
      '/ui/routes.ts',
      '/ui/vendor/cytoscape.cjs.js',
      '/ui/assets/app.js',
    ]) {
      expect((await t.app.request(path)).status, path).toBe(404);
    }
    expect((await t.app.request('/v1/memories?as_of=now')).status).toBe(401);
  });
});
