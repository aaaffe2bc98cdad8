// A search at a past as_of answers byte for byte alike however much is written after it: full-text
// scores count only the rows of its scope known at as_of (the space's, or the whole tenant's for a search
// without `space`, when an in-memory copy of that scope answers), so later rows that make a word common do
// not reorder what was found then.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: 'ks=spaced,kw=whole' });
});
afterAll(async () => {
  await t?.close();
});

// A search inside the space `diary` of one application, and one without `space` in another whose rows are
// split over two spaces (so the whole tenant, not one space, is the scope its statistics count).
describe.each([
  { scope: 'inside a space', key: 'ks', space: 'diary' as string | undefined },
  { scope: 'without a space', key: 'kw', space: undefined },
])('a search $scope at a past as_of', ({ key, space }) => {
  let written = 0;
  /** Rows go to `diary`, or (searched without a space) to two spaces in turn. */
  const write = async (nodes: { id: string; statement: string }[], backfill?: string) => {
    const target = space ?? `diary-${written++ % 2}`;
    const body: Record<string, unknown> = { space: target, nodes: nodes.map((n) => ({ kind: 'claim', ...n })) };
    if (backfill) body.backfill = { declared_captured_at: backfill, reason: 'test: an older source' };
    const r = await t.call('POST', '/v1/memories', { key, body });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  };
  const serverNow = async (): Promise<string> =>
    (await t.call('GET', '/v1/memories', { key, query: { as_of: '2100-01-01', limit: 1 } })).json.certificate.tx_as_of;
  const ask = (query: string, asOf: string) =>
    t.call('POST', '/v1/search', { key, body: { query, as_of: asOf, space, limit: 10, depth: 0 } });
  /**
   * The answer's results, byte for byte, and its certificate's backfill count; the rest of the certificate
   * says when it was answered and how many matches were learned after as_of, which later writes change.
   */
  const search = async (query: string, asOf: string): Promise<string> => {
    const r = await ask(query, asOf);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return JSON.stringify({ results: r.json.results, backfill: r.json.certificate.backfill ?? null });
  };
  const order = (answer: string): string[] => (JSON.parse(answer) as { results: { node: { id: string } }[] }).results.map((x) => x.node.id);
  const masked = async (query: string, asOf: string): Promise<unknown> => (await ask(query, asOf)).json.certificate.masked;

  it('answers alike after later writes make its words common, and counts backfilled rows known by then', async () => {
    // "kayak" is rare and "lantern" common when first asked: the kayak note comes first.
    await write([
      { id: 'kayak-note', statement: 'kayak trip along the quiet shore' },
      { id: 'lantern-note', statement: 'lantern trip along the quiet shore' },
      ...Array.from({ length: 8 }, (_, i) => ({ id: `lantern-${i}`, statement: `lantern ${i} hung by the porch door` })),
    ]);
    const then = await serverNow();
    const first = await search('kayak lantern', then);
    expect(order(first)[0]).toBe('kayak-note');

    // Then "kayak" becomes the common word of the space.
    await write(Array.from({ length: 30 }, (_, i) => ({ id: `kayak-${i}`, statement: `kayak ${i} stored in the boat shed` })));
    // Settled, as a second later: LanceDB's full-text index, too, then counts the later rows.
    await t.started.services.search?.settled();
    const now = await serverNow();
    // As known now, the rarer word leads (the scores counted every row): the later writes changed the statistics.
    expect(order(await search('kayak lantern', now))[0]).toMatch(/^lantern-/);
    // As known then, the answer is the one given then; its certificate counts the later matches it hides.
    expect(await search('kayak lantern', then)).toBe(first);
    expect(await masked('kayak lantern', then)).toEqual({ node: 30 });

    // A backfill declared before `then` is known at `then`: it counts as then-known rows do, so the answer
    // at `then` changes, as a search of the same rows written before `then` would.
    const declared = new Date(Date.parse(then) - 1000).toISOString();
    await write(
      Array.from({ length: 30 }, (_, i) => ({ id: `old-lantern-${i}`, statement: `lantern ${i} from the old almanac` })),
      declared,
    );
    const withBackfill = await search('kayak lantern', then);
    expect(withBackfill).not.toBe(first);
    expect(JSON.parse(withBackfill).backfill).toEqual({ batches: 1, rows: expect.any(Number) });
    // ...and itself replays after more writes.
    await write([{ id: 'late', statement: 'lantern kayak lantern kayak' }]);
    expect(await search('kayak lantern', then)).toBe(withBackfill);
  }, 60_000);
});
