// A data folder written by the release before invalidations (no Invalidation table in its graph store)
// opens with this one: the table is created, every row reads back, and invalidation works on it.
// The old folder is made by the current server with that table then dropped, as the old release left it.
import kuzu from 'kuzu';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../evals/lib/spawn-server.ts';

let server: ServerProcess | null = null;
let dataDir = '';

afterAll(async () => {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const json = async (r: Response): Promise<any> => r.json();
const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a data folder of the previous release', () => {
  it('opens, reads back every row, and takes invalidations', async () => {
    server = await spawnServer();
    dataDir = server.dataDir;
    const w = await json(
      await post(server.base, '/v1/memories', {
        space: 's',
        nodes: [
          { id: 'old1', kind: 'claim', statement: 'Written by the old release', asserted_at: '2024-01-01T00:00:00Z' },
          { id: 'old2', kind: 'claim', statement: 'Also old' },
        ],
        edges: [{ source_id: 'old1', target_id: 'old2', edge_type: 'CAUSES' }],
      }),
    );
    expect(w.accepted).toBe(3);
    await server.stop();

    // As the previous release left it: no Invalidation table (nor the later index of its rows by space).
    const db = new kuzu.Database(join(dataDir, 'graph', 'graph.kuzu'));
    const conn = new kuzu.Connection(db);
    for (const table of ['HoldsInvalidation', 'Invalidation']) {
      const dropped = await conn.query(`DROP TABLE ${table}`);
      (Array.isArray(dropped) ? dropped : [dropped]).forEach((r) => r.close());
    }
    await conn.close();
    await db.close();

    server = await spawnServer({ dataDir });
    const list = await json(await fetch(`${server.base}/v1/memories?as_of=now&space=s`));
    expect(list.items.map((n: { id: string }) => n.id)).toEqual(['old1', 'old2']);
    const inv = await post(server.base, '/v1/memories/old2/invalidate', { reason: 'checked after the upgrade' });
    expect(inv.status).toBe(200);
    const get = await json(await fetch(`${server.base}/v1/memories/old2?as_of=now`));
    expect(get.reason).toBe('invalidated');
  });
});
