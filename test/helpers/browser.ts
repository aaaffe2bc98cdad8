// Headless Chromium for the ledger browser's tests and bench, driven by playwright-core (which never
// downloads a browser): Debian's /usr/bin/chromium, a fresh profile per launch, and every request that
// leaves the server under test aborted and recorded, so a page can never reach the network.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** The little of the page that test functions touch (the tests are type-checked without the DOM library). */
export interface PageElement {
  id: string;
  type?: string;
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  labels?: { length: number } | null;
  querySelector(selector: string): PageElement | null;
}
export interface CyElement {
  id(): string;
  data(key: string): unknown;
  source(): CyElement;
  target(): CyElement;
  renderedPosition(): { x: number; y: number };
}
export interface PageWindow {
  ledgerUi: {
    timings: { what: string; ms: number; sinceLoad: number; rows: number }[];
    graph: { nodes(): CyElement[]; edges(): CyElement[]; getElementById(id: string): CyElement };
  };
  __xss?: unknown;
}
export interface PageDocument {
  body: PageElement;
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): PageElement[];
}
// Module-scoped, not global: only functions handed to page.evaluate see these, in the page.
declare const document: PageDocument;
declare const requestAnimationFrame: (run: () => void) => number;

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const hasChromium = (): boolean => existsSync(CHROMIUM_PATH);

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  /** Requests the page tried to send anywhere but `origin` (always aborted). */
  offsite: string[];
  /** Every address the page asked for (a key must never be in one). */
  requested: string[];
  /** Console errors and uncaught page errors (a CSP violation shows here). */
  errors: string[];
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(origin: string): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'ledger-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    acceptDownloads: true,
    viewport: { width: 1280, height: 800 },
  });
  const offsite: string[] = [];
  const requested: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    requested.push(url);
    if (url.startsWith(`${origin}/`) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
    offsite.push(url);
    return route.abort();
  });
  return {
    context,
    offsite,
    requested,
    errors,
    async newPage(viewport) {
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until the page has finished the refresh started by the last action. */
export async function settled(page: Page): Promise<void> {
  // A function, not a string: the page's CSP forbids eval, which is how string expressions would run.
  await page.waitForFunction(() => document.body.dataset.busy === '0', undefined, { timeout: 30_000 });
}

/** Waits until the page has drawn two more frames, so events the browser queued for the next frame (scroll) have run. */
export async function nextFrames(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))));
}

/** Ids of the blocks listed, in order (one per row version). */
export async function listedIds(page: Page): Promise<string[]> {
  return page.evaluate(() => [...document.querySelectorAll('#blocks li.block')].map((li) => li.dataset.id ?? ''));
}
