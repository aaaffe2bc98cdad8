// The ledger browser at 10k blocks in one space: first render (navigation to the block list drawn) and
// the list refresh after an as_of move, both timed in the browser (window.ledgerUi.timings). Prints a
// table; not a timed test. Run: npm run ui:bench (needs Chromium at /usr/bin/chromium).
import { rmSync } from 'node:fs';
import { spawnServer } from '../lib/spawn-server.ts';
import { median, percentile, table } from '../lib/stats.ts';
import { CHROMIUM_PATH, hasChromium, launchBrowser, settled, type PageWindow } from '../../test/helpers/browser.ts';

declare const window: PageWindow;
declare const performance: { now(): number; getEntriesByType(type: string): { name: string; startTime: number; duration: number }[] };

const BLOCKS = Number(process.env.UI_BENCH_BLOCKS ?? 10_000);
const BATCHES = 10;
const MOVES = 10;

if (!hasChromium()) {
  console.log(`ui bench: no Chromium at ${CHROMIUM_PATH}; nothing measured`);
  process.exit(0);
}

const server = await spawnServer({ env: { SVC_TENANT: 'bench' } });
try {
  const per = Math.ceil(BLOCKS / BATCHES);
  const t0 = performance.now();
  for (let b = 0; b < BATCHES; b++) {
    const day = `2024-01-${String(b + 1).padStart(2, '0')}`;
    const nodes = Array.from({ length: per }, (_, i) => ({
      id: `n${b}-${i}`,
      kind: i % 7 === 0 ? 'prediction' : 'claim',
      category: `c${i % 5}`,
      statement: `Observation ${i} of day ${day}: metric ${i % 13} moved`,
      asserted_at: `${day}T12:00:00Z`,
    }));
    const r = await fetch(`${server.base}/v1/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ space: 'bench:one', backfill: { declared_captured_at: `${day}T23:00:00Z`, reason: `day ${day}` }, nodes }),
    });
    if (!r.ok) throw new Error(`write failed: ${r.status} ${await r.text()}`);
  }
  console.log(`wrote ${per * BATCHES} blocks in ${BATCHES} backfilled batches in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // Let the server's search index catch up with the import, so the page is timed against a server
  // that is only answering it.
  await new Promise((r) => setTimeout(r, 10_000));
  const browser = await launchBrowser(server.base);
  try {
    const firsts: number[] = [];
    const refreshes: number[] = [];
    for (let round = 0; round < 3; round++) {
      const page = await browser.newPage();
      await page.goto(`${server.base}/ui`);
      await settled(page);
      const first = await page.evaluate(() => window.ledgerUi.timings.find((t) => t.what === 'first-render'));
      if (first) firsts.push(first.sinceLoad);
      if (round === 0) {
        // Where the first render's time goes: each request the page made, from its start to its end.
        const entries = await page.evaluate(() =>
          performance.getEntriesByType('resource').map((e) => ({ name: e.name, start: e.startTime, ms: e.duration })),
        );
        console.log(
          table(
            ['first load: request', 'start ms', 'took ms'],
            entries.map((e) => [e.name.replace(server.base, '').slice(0, 70), e.start, e.ms]),
          ),
        );
      }
      for (let m = 0; m < MOVES; m++) {
        const day = String(1 + ((m + round) % BATCHES)).padStart(2, '0');
        await page.fill('#as-of', `2024-01-${day}T23:30:00Z`);
        await page.press('#as-of', 'Enter');
        await settled(page);
      }
      await page.focus('#as-of-slider');
      for (const key of ['End', 'Home', 'PageUp', 'End']) {
        await page.keyboard.press(key);
        await settled(page);
      }
      const all = await page.evaluate(() => window.ledgerUi.timings.filter((t) => t.what === 'list-refresh').map((t) => t.ms));
      refreshes.push(...all);
      await page.close();
    }
    console.log(
      table(
        ['measure (browser-side, ms)', 'n', 'p50', 'p95', 'max'],
        [
          ['first render (navigation → list drawn)', String(firsts.length), median(firsts), percentile(firsts, 95), Math.max(...firsts)],
          [
            'list refresh after an as_of move',
            String(refreshes.length),
            median(refreshes),
            percentile(refreshes, 95),
            Math.max(...refreshes),
          ],
        ],
      ),
    );
    console.log('The list draws one page of 200 rows; the spaces panel counts all 10k on every move.');
  } finally {
    await browser.close();
  }
} finally {
  await server.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
}
