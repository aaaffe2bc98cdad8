// An acknowledged import survives a SIGKILL: rows posted to POST /admin/tenants/{t}/rows in small pages
// (acknowledged from the write journal, as small writes are) are all there after the target is killed
// right after the last answer and started again on the same folder, with the source's digest; and the
// tenant's next write there still comes after every imported row.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../evals/lib/spawn-server.ts';

const OP = 'operator-key-crash-0123456789';
const ENV = { SVC_API_KEYS: 'ka=acme', SVC_OPERATOR_KEY: OP };
const servers: ServerProcess[] = [];

async function call(s: ServerProcess, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const r = await fetch(`${s.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  expect(r.status, JSON.stringify(json)).toBe(200);
  return json;
}

afterAll(async () => {
  for (const s of servers) {
    await s.stop().catch(() => undefined);
    rmSync(s.dataDir, { recursive: true, force: true });
  }
});

describe('an acknowledged import', () => {
  it('is durable across a SIGKILL of the target', async () => {
    const source = await spawnServer({ env: ENV });
    servers.push(source);
    for (let i = 0; i < 6; i++)
      await call(source, 'POST', '/v1/memories', 'ka', {
        space: `user:${i % 2}`,
        nodes: [
          { id: `n${i}`, kind: 'claim', statement: `note ${i}` },
          { id: `m${i}`, kind: 'claim', statement: `more ${i}` },
        ],
        edges: i > 0 ? [{ source_id: `n${i}`, target_id: `n${i - 1}`, edge_type: 'SUPPORTS' }] : [],
      });
    const rows = (await call(source, 'GET', '/admin/tenants/acme/rows?limit=1000', OP)).rows as { tseq: number }[];
    const digest = await call(source, 'GET', '/admin/tenants/acme/digest', OP);
    expect(digest.rows).toBe(rows.length);

    const target = await spawnServer({ env: ENV });
    for (let i = 0; i < rows.length; i += 4) await call(target, 'POST', '/admin/tenants/acme/rows', OP, { rows: rows.slice(i, i + 4) });
    target.child.kill('SIGKILL');
    await new Promise<void>((r) =>
      target.child.exitCode !== null || target.child.signalCode !== null ? r() : target.child.once('exit', () => r()),
    );
    const again = await spawnServer({ dataDir: target.dataDir, env: ENV });
    servers.push(again);
    expect(await call(again, 'GET', '/admin/tenants/acme/digest', OP)).toEqual(digest);
    const top = Math.max(...rows.map((r) => r.tseq));
    await call(again, 'POST', '/v1/memories', 'ka', { space: 'user:0', nodes: [{ id: 'after', kind: 'claim', statement: 'after' }] });
    const tail = (await call(again, 'GET', `/admin/tenants/acme/rows?after=${top}`, OP)).rows as { table: string; id?: string }[];
    expect(tail.filter((r) => r.table === 'node').map((r) => r.id)).toEqual(['after']);
  }, 180_000);
});
