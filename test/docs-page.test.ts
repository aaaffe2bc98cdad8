// /docs as a browser sees it: headless Chromium loads the page from the app on a real port, with the
// page's own Content-Security-Policy in force, and the API reference must render every documented path
// without a CSP violation or a request to another origin. Skips (with a message) where no Chromium is.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../bridge/openapi.ts';
import { SERVICE_VERSION } from '../server/version.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { listen } from './helpers/mcp-client.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`docs-page: skipping the browser test, no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);

let t: TestApp;
let http: { base: string; close(): Promise<void> };

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: 'docs-key=alpha' });
  http = await listen(t);
});
afterAll(async () => {
  await http?.close();
  await t?.close();
});

describe('/docs', () => {
  it('is open, served with a CSP that forbids inline scripts and other origins, and boots from a served file', async () => {
    const page = await t.app.request('/docs');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/https?:|unsafe-eval|script-src[^;]*unsafe-inline/);
    const html = await page.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
    for (const src of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '')) {
      expect(src, 'a same-origin path').toMatch(/^\/(docs|v1)\//);
      expect((await t.app.request(src)).status, src).toBe(200);
    }
    expect((await t.app.request('/docs/assets/package.json')).status).toBe(404);
  });

  it.skipIf(!haveChromium)('renders the API reference in headless Chromium with no CSP violation and no foreign request', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      const foreign: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('request', (r) => {
        if (!r.url().startsWith(http.base) && !r.url().startsWith('data:')) foreign.push(r.url());
      });
      await page.goto(`${http.base}/docs`, { waitUntil: 'load' });
      await page.waitForSelector('.opblock', { timeout: 30_000 });
      const shown = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path') ?? e.textContent ?? ''));
      const documented = Object.keys(openApiDocument(SERVICE_VERSION).paths as object);
      for (const path of documented)
        expect(
          shown.map((s) => s.replace(/\u200b/g, '')),
          path,
        ).toContain(path);
      expect(await page.textContent('.info .title')).toContain('memory-ledger');
      // Swagger UI's own complaints about the document (unsupported fields, broken $refs) show as errors.
      expect(await page.$$eval('.errors-wrapper, .version-pragma', (els) => els.map((e) => e.textContent))).toEqual([]);
      expect(
        problems.filter((p) => /Content Security Policy|Refused to/i.test(p)),
        problems.join('\n'),
      ).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
