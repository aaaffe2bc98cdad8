// Issue 24 item 7, end to end: a superseded block comes after its successor even when the successor
// sits on a SUPERSEDES cycle (p SUPERSEDES y, p SUPERSEDES q, q SUPERSEDES p).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

it('ranks y after p on POST /v1/search', async () => {
  const at = '2024-05-01T00:00:00Z';
  const w = await t.call('POST', '/v1/memories', {
    body: {
      space: 's',
      nodes: ['y', 'p', 'q'].map((id) => ({ id, kind: 'claim', statement: 'flood warning issued', asserted_at: at })),
      edges: [
        { source_id: 'p', target_id: 'y', edge_type: 'SUPERSEDES', asserted_at: at },
        { source_id: 'p', target_id: 'q', edge_type: 'SUPERSEDES', asserted_at: at },
        { source_id: 'q', target_id: 'p', edge_type: 'SUPERSEDES', asserted_at: at },
      ],
    },
  });
  expect(w.json.accepted).toBe(6);
  const r = await t.call('POST', '/v1/search', { body: { query: 'flood warning', as_of: 'now', depth: 0 } });
  expect(r.status).toBe(200);
  const order = r.json.results.map((x: { node: { id: string } }) => x.node.id);
  expect(order).toHaveLength(3);
  expect(order.indexOf('y')).toBeGreaterThan(order.indexOf('p'));
});
