// DELETE /admin/tenants/{t} over the REST door: past wait_ms it answers 202 and the deletion goes on;
// while a tenant's rows are being deleted (or a deletion stopped half-way), its requests get 503 with
// Retry-After and the operator's export 409, other tenants are answered as before; a DELETE again
// finishes it (200, done) and the tenant answers from nothing.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';

const OP = 'operator-key-drop-route-0123456789';
let t: TestApp;
let failNext = false;

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: 'ka=acme,kb=beta', SVC_OPERATOR_KEY: OP }, undefined, {
    dropPartRows: 50,
    graph: {
      fault: (point) => {
        if (point === 'after-delete-part' && failNext) {
          failNext = false;
          throw new Error('stopped after a part');
        }
      },
    },
  });
});

afterAll(async () => {
  await t.close();
  rmSync(t.dir, { recursive: true, force: true });
});

async function fill(key: string, prefix: string, writes: number): Promise<void> {
  for (let w = 0; w < writes; w++) {
    const r = await t.call('POST', '/v1/memories', {
      key,
      body: {
        space: `user:${w}`,
        nodes: Array.from({ length: 40 }, (_, i) => ({ id: `${prefix}${w}-${i}`, kind: 'claim', statement: `${prefix} note ${w} ${i}` })),
      },
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  }
}

const list = (key: string) => t.call('GET', '/v1/memories', { key, query: { as_of: '2100-01-01', limit: 500 } });

describe('DELETE /admin/tenants/{tenant}', () => {
  it('answers 202 past wait_ms, refuses the tenant until the deletion ends, and 200 once none of it is left', async () => {
    await fill('kb', 'b', 2);
    const beta = (await list('kb')).json.items;
    await fill('ka', 'a', 8);

    // Parts of 50 rows: a dozen engine round trips at least, past a wait of 0 ms.
    const started = await t.call('DELETE', '/admin/tenants/acme', { key: OP, query: { force: 'true', wait_ms: 0 } });
    expect(started.status, JSON.stringify(started.json)).toBe(202);
    expect(started.json).toMatchObject({ tenant: 'acme', done: false });
    expect(started.headers.get('retry-after')).toBe('1');
    const finished = await t.call('DELETE', '/admin/tenants/acme', { key: OP, query: { force: 'true', wait_ms: 60_000 } });
    expect(finished.status).toBe(200);
    expect(finished.json).toMatchObject({ tenant: 'acme', done: true });
    expect((await list('ka')).json.items).toEqual([]);
    expect((await list('kb')).json.items).toEqual(beta);
    expect((await t.call('DELETE', '/admin/tenants/acme', { key: OP, query: { force: 'true', wait_ms: 'soon' } })).json.detail.loc).toEqual(
      ['query', 'wait_ms'],
    );
  });

  it('keeps refusing a tenant whose deletion stopped half-way, and finishes it when asked again', async () => {
    await fill('ka', 'c', 4);
    failNext = true;
    const failed = await t.call('DELETE', '/admin/tenants/acme', { key: OP, query: { force: 'true', wait_ms: 60_000 } });
    expect(failed.status).toBe(500);

    const read = await list('ka');
    expect(read.status).toBe(503);
    expect(read.json.detail.error).toBe('unavailable');
    expect(read.json.detail.why).toContain('being deleted');
    expect(read.headers.get('retry-after')).toBe('5');
    const write = await t.call('POST', '/v1/memories', { key: 'ka', body: { space: 'user:0', nodes: [{ id: 'x', kind: 'claim' }] } });
    expect(write.status).toBe(503);
    const exported = await t.call('GET', '/admin/tenants/acme/rows', { key: OP });
    expect(exported.status).toBe(409);
    expect(exported.json.detail.why).toContain('being deleted');
    expect((await list('kb')).status).toBe(200);

    const again = await t.call('DELETE', '/admin/tenants/acme', { key: OP, query: { force: 'true', wait_ms: 60_000 } });
    expect(again.status).toBe(200);
    expect(again.json.done).toBe(true);
    expect(again.json.deleted).toBeGreaterThan(0);
    expect((await list('ka')).json.items).toEqual([]);
    const back = await t.call('POST', '/v1/memories', { key: 'ka', body: { space: 'user:0', nodes: [{ id: 'x', kind: 'claim' }] } });
    expect(back.status).toBe(200);
  });
});
