// A tenant copied one row per call, with the search index done with each page before the next comes:
// every write of the source is split between pages (its nodes in one, the edges linking them in later
// ones). A block's full-text document holds the words of the blocks its own write links to it, so a node
// indexed before the rest of its write landed was found by fewer words on the copy than on the source, and
// the copy's search ranked differently. The copy's index holds the source's documents, its searches answer
// as the source's, and the last write, never followed by another, is indexed when a search asks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as lancedb from '@lancedb/lancedb';
import { startTestApp, type TestApp } from './helpers/app.ts';

const OP = 'operator-key-0123456789';
const env = { SVC_API_KEYS: 'ka=acme', SVC_OPERATOR_KEY: OP };

let a: TestApp;
let b: TestApp;
let now: string;

const write = async (t: TestApp, body: unknown): Promise<void> => {
  const r = await t.call('POST', '/v1/memories', { key: 'ka', body });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
};

/** The full-text document of every row of the tenant's index table, in seq order: [id, space, text]. */
async function documents(t: TestApp): Promise<[string, string, string][]> {
  const db = await lancedb.connect(`${t.dir}/search/tables`);
  try {
    const table = await db.openTable(`t_${Buffer.from('acme').toString('hex')}`);
    const rows = (await table.query().select(['id', 'seq', 'space', 'text']).toArray()) as {
      id: string;
      seq: number;
      space: string;
      text: string;
    }[];
    table.close();
    return rows.sort((x, y) => Number(x.seq) - Number(y.seq)).map((r) => [r.id, r.space, r.text]);
  } finally {
    db.close();
  }
}

const search = (t: TestApp, body: object): Promise<{ status: number; json: any }> =>
  t.call('POST', '/v1/search', { key: 'ka', body: { as_of: now, limit: 20, ...body } });

beforeAll(async () => {
  a = await startTestApp(env);
  b = await startTestApp(env);
  for (let i = 0; i < 4; i++)
    await write(a, {
      space: i % 2 === 0 ? 'farm' : 'market',
      nodes: [
        { id: `harvest-${i}`, kind: 'claim', statement: `the tea harvest of field ${i} came in early` },
        { id: `price-${i}`, kind: 'claim', statement: `buyers paid ${40 + i} dollars a kilo` },
        { id: `note-${i}`, kind: 'claim', statement: `a note on field ${i} and its buyers` },
      ],
      edges: [
        { source_id: `harvest-${i}`, target_id: `price-${i}`, edge_type: 'CAUSES' },
        ...(i > 0 ? [{ source_id: `price-${i - 1}`, target_id: `harvest-${i}`, edge_type: 'PRECEDES' }] : []),
      ],
    });
  now = (await a.call('GET', '/v1/memories', { key: 'ka', query: { as_of: '2100-01-01', limit: 1 } })).json.certificate.tx_as_of;
  const exported = await a.call('GET', '/admin/tenants/acme/rows', { key: OP, query: { after: 0, limit: 1000 } });
  expect(exported.json.next_after).toBeNull();
  const rows: unknown[] = exported.json.rows;
  for (const row of rows) {
    const r = await b.call('POST', '/admin/tenants/acme/rows', { key: OP, body: { rows: [row] } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    // The index is done with this page before the next is stored.
    await b.started.services.search?.idle();
  }
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('a tenant copied one row per call', () => {
  it('indexes the last write when a search asks, though no later page showed it whole', async () => {
    const found = await search(b, { query: 'tea harvest field 3' });
    expect(found.status).toBe(200);
    expect(found.json.results.map((r: { node: { id: string } }) => r.node.id)).toContain('harvest-3');
  });

  it('holds the documents the source indexed, and answers its searches', async () => {
    for (const t of [a, b]) await t.started.services.search?.optimize(['acme']);
    const source = await documents(a);
    expect(source.length).toBe(12);
    // Linked words made it into the documents (a document with none would prove nothing).
    expect(source.find(([id]) => id === 'price-2')?.[2]).toContain('tea harvest of field 2');
    expect(await documents(b)).toEqual(source);
    for (const body of [
      { query: 'tea harvest dollars' },
      { query: 'buyers paid for the harvest' },
      { query: 'early harvest', space: 'market' },
      { query: 'dollars a kilo', space: 'farm' },
    ]) {
      const [ra, rb] = [await search(a, body), await search(b, body)];
      expect(ra.status).toBe(200);
      expect(ra.json.results.length).toBeGreaterThan(0);
      delete ra.json.certificate.tx_as_of;
      delete rb.json.certificate.tx_as_of;
      expect(JSON.stringify(rb.json), body.query).toBe(JSON.stringify(ra.json));
    }
  });
});
