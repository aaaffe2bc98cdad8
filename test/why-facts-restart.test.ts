// Declarations and verdicts survive a restart of the real server process: the rules in force at each
// instant are the same after reloading from Kuzu, and a verdict recorded before the restart is not
// recorded again after it (its identity is persisted with it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { spawnServer, type ServerProcess } from '../evals/lib/spawn-server.ts';

let server: ServerProcess;

async function call(method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<any> {
  const url = new URL(server.base + path);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
  const r = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(r.status).toBe(200);
  return r.json();
}

const clock = async (): Promise<string> => {
  await new Promise((r) => setTimeout(r, 3));
  const at = (await call('GET', '/v1/memories', undefined, { as_of: '2000-01-01', limit: '1' })).certificate.tx_as_of as string;
  await new Promise((r) => setTimeout(r, 3));
  return at;
};

const VALUE = { name: 'Bergen, "west"', note: 'line one\nline two' };

beforeAll(async () => {
  server = await spawnServer();
});
afterAll(async () => {
  await server?.stop();
  if (server) rmSync(server.dataDir, { recursive: true, force: true });
});

describe('after a restart', () => {
  it('keeps declarations in force by instant and verdicts by identity', async () => {
    await call('POST', '/v1/memories', {
      space: 's',
      nodes: [
        { id: 'a', kind: 'claim', fact_key: 'city', fact_value: 'Oslo', asserted_at: '2024-01-01T00:00:00Z' },
        { id: 'b', kind: 'claim', fact_key: 'city', fact_value: VALUE, payload: { source: 'crm' }, asserted_at: '2024-02-01T00:00:00Z' },
      ],
    });
    const rules = { fact_key: 'city', key_fields: ['country', 'region'], policy: 'source_priority', source_order: ['crm', 's'] };
    await call('POST', '/v1/facts', { fact_key: 'city', policy: 'strict' });
    const between = await clock();
    const declared = (await call('POST', '/v1/facts', rules)).declared;
    const beforeVerdicts = await clock();
    const refused = await call('POST', '/v1/resolve', { fact: 'city', as_of: between });
    expect(refused).toMatchObject({ status: 'no_answer', reason: 'unresolved_conflict', policy: 'strict' });
    const now = await clock();
    const answered = await call('POST', '/v1/resolve', { fact: 'city', as_of: now });
    expect(answered).toMatchObject({ status: 'answered', value: VALUE, policy: 'source_priority' });
    const recorded = (await call('GET', '/v1/memories', undefined, { as_of: beforeVerdicts })).masked.verdict;
    expect(recorded).toBe(2);

    await server.stop();
    server = await spawnServer({ dataDir: server.dataDir });

    const same = (r: any) => ({ ...r, certificate: { ...r.certificate, tx_as_of: 'x' } });
    expect(same(await call('POST', '/v1/resolve', { fact: 'city', as_of: between }))).toEqual(same(refused));
    expect(same(await call('POST', '/v1/resolve', { fact: 'city', as_of: now }))).toEqual(same(answered));
    expect((await call('POST', '/v1/resolve', { fact: 'city', as_of: now, rules_as_of: between })).policy).toBe('strict');
    // Re-asked questions found their verdicts, even the rules_as_of one (same rules, same candidates as
    // the refusal at `between`): nothing new was recorded.
    expect((await call('GET', '/v1/memories', undefined, { as_of: beforeVerdicts })).masked.verdict).toBe(recorded);
    // Re-sending the rules in force is a no-op only if policy, key_fields and source_order all came back.
    expect((await call('POST', '/v1/facts', rules)).declared).toEqual(declared);
  });
});
