// Strict input (CONTRACT v1.x) through both doors: unknown fields are 422 extra_forbidden naming the field,
// an empty write is 422, edge types are case-insensitive, refusals say how to fix the row, instants out of
// range name the range, and `now` is accepted wherever a read takes an instant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { inMemoryClient } from './helpers/mcp-client.ts';

let t: TestApp;
let mcp: Client;

beforeAll(async () => {
  t = await startTestApp();
  mcp = await inMemoryClient({ ledger: t.ledger, tenant: t.config.tenant, services: t.started.services });
  await t.call('POST', '/v1/memories', {
    body: {
      space: 's',
      nodes: [
        { id: 'a', kind: 'claim', statement: 'a' },
        { id: 'b', kind: 'claim', statement: 'b' },
      ],
    },
  });
});

afterAll(async () => {
  await mcp.close();
  await t.close();
});

async function viaMcp(name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: any }> {
  const r = await mcp.callTool({ name, arguments: args });
  return { isError: r.isError === true, body: r.isError ? r._meta?.['memory-ledger/error'] : r.structuredContent };
}

describe('strict input', () => {
  const cases: [string, string, Record<string, unknown>, (string | number)[]][] = [
    ['a mistyped top-level key', 'remember', { space: 's', nodes: [{ kind: 'claim', statement: 'x' }], memories: [] }, ['memories']],
    ['a key inside a node', 'remember', { space: 's', nodes: [{ kind: 'claim', statement: 'x', colour: 'red' }] }, ['nodes', 0, 'colour']],
    [
      'a key inside an edge',
      'remember',
      { space: 's', edges: [{ source_id: 'a', target_id: 'b', edge_type: 'CAUSES', weight: 2 }] },
      ['edges', 0, 'weight'],
    ],
    [
      'a key inside a message',
      'remember',
      { space: 's', messages: [{ content: 'Rain.', observed_at: '2024-01-01T00:00:00Z', source_description: 'chat', author: 'me' }] },
      ['messages', 0, 'author'],
    ],
    [
      'a key inside backfill',
      'remember',
      { space: 's', nodes: [{ kind: 'claim' }], backfill: { declared_captured_at: '2024-01-01T00:00:00Z', reason: 'r', when: 1 } },
      ['backfill', 'when'],
    ],
    ['a key in a search body', 'search_memory', { query: 'a', as_of: 'now', colour: 'red' }, ['colour']],
    ['a key in a resolve body', 'resolve_fact', { fact: 'f', as_of: 'now', policy: 'strict' }, ['policy']],
  ];
  for (const [what, op, body, loc] of cases) {
    it(`${what}: 422 extra_forbidden at that field, over REST and MCP alike`, async () => {
      const path = op === 'remember' ? '/v1/memories' : op === 'search_memory' ? '/v1/search' : '/v1/resolve';
      const rest = await t.call('POST', path, { body });
      expect(rest.status).toBe(422);
      expect(rest.json.detail).toContainEqual(expect.objectContaining({ type: 'extra_forbidden', loc: ['body', ...loc] }));
      const m = await viaMcp(op, body);
      expect(m.isError).toBe(true);
      expect(JSON.stringify(m.body)).toContain('extra_forbidden');
    });
  }

  it('nothing of a refused request is written', async () => {
    await t.call('POST', '/v1/memories', { body: { space: 's', nodes: [{ id: 'ghost', kind: 'claim', statement: 'x', colour: 'red' }] } });
    expect((await t.call('GET', '/v1/memories/ghost', { query: { as_of: 'now' } })).json.reason).toBe('absent');
  });

  it('an unknown query parameter is 422 extra_forbidden naming it, and a typo of a field names the field', async () => {
    const r = await t.call('GET', '/v1/memories', { query: { as_of: 'now', spcae: 'user:ada' } });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([
      expect.objectContaining({
        type: 'extra_forbidden',
        loc: ['query', 'spcae'],
        input: 'user:ada',
        msg: expect.stringContaining('"space"'),
      }),
    ]);
    for (const path of ['/v1/spaces', '/v1/export', '/v1/memories/a', '/v1/memories/a/why']) {
      const g = await t.call('GET', path, { query: { as_of: 'now', colour: 'red' } });
      expect([path, g.status, g.json.detail?.[0]?.loc]).toEqual([path, 422, ['query', 'colour']]);
    }
    const m = await viaMcp('list_memories', { as_of: 'now', spcae: 'user:ada' });
    expect(m.isError).toBe(true);
    expect(JSON.stringify(m.body)).toContain('did you mean \\"space\\"');
  });

  it('a query parameter on a body route is refused too, not dropped', async () => {
    const r = await t.call('POST', '/v1/search?space=s', { body: { query: 'a', as_of: 'now' } });
    expect(r.status).toBe(422);
    expect(r.json.detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['query', 'space'], input: 's' });
  });

  it('an impossible date names the slip, not the offset', async () => {
    const r = await t.call('GET', '/v1/memories', { query: { as_of: '2024-02-30' } });
    expect(r.status).toBe(400);
    expect(r.json.detail.why).toBe('as_of: February 2024 has no 30th: it has 29 days, e.g. 2024-02-29');
    const leap = await t.call('GET', '/v1/memories', { query: { as_of: '2023-02-29T10:00:00Z' } });
    expect(leap.json.detail.why).toMatch(/February 2023 has no 29th \(2023 is not a leap year\)/);
    expect((await t.call('GET', '/v1/memories', { query: { as_of: '2024-13-01' } })).json.detail.why).toMatch(/no month 13/);
    expect((await t.call('GET', '/v1/memories', { query: { as_of: '2024-04-31T24:00:00Z' } })).json.detail.why).toMatch(
      /April 2024 has no 31st/,
    );
    expect((await t.call('GET', '/v1/memories', { query: { as_of: '2024-04-30T24:00:00Z' } })).json.detail.why).toMatch(/no hour 24/);
    const body = await t.call('POST', '/v1/memories', {
      body: { space: 's', nodes: [{ kind: 'claim', asserted_at: '2024-06-31T00:00:00Z' }] },
    });
    expect(body.status).toBe(422);
    expect(body.json.detail[0]).toMatchObject({
      loc: ['body', 'nodes', 0, 'asserted_at'],
      msg: expect.stringMatching(/June 2024 has no 31st/),
    });
    const m = await viaMcp('search_memory', { query: 'a', as_of: '2024-02-30' });
    expect(JSON.stringify(m.body)).toContain('February 2024 has no 30th');
    // A real date without an offset still hears about the offset.
    expect((await t.call('GET', '/v1/memories', { query: { as_of: '2024-02-28T10:00' } })).json.detail.why).toMatch(/timezone offset/);
  });

  it('a flag must be true or false, a count a whole number, over both doors', async () => {
    const flag = await t.call('GET', '/v1/memories', { query: { as_of: 'now', current_only: 'yes' } });
    expect(flag.status).toBe(422);
    expect(flag.json.detail[0]).toMatchObject({ loc: ['query', 'current_only'], msg: 'must be true or false', input: 'yes' });
    const limit = await t.call('GET', '/v1/memories', { query: { as_of: 'now', limit: 'abc' } });
    expect(limit.status).toBe(422);
    expect(limit.json.detail[0]).toMatchObject({ loc: ['query', 'limit'], msg: 'must be a whole number from 1 to 1000', input: 'abc' });
    expect(JSON.stringify(limit.json)).not.toContain('NaN');
    for (const v of ['0', '1.5', '5000']) {
      expect((await t.call('GET', '/v1/memories', { query: { as_of: 'now', limit: v } })).json.detail[0].msg).toBe(
        'must be a whole number from 1 to 1000',
      );
    }
    expect((await t.call('GET', '/v1/memories/a/why', { query: { as_of: 'now', depth: 'deep' } })).json.detail[0].msg).toBe(
      'must be a whole number from 0 to 10',
    );
    const search = await t.call('POST', '/v1/search', { body: { query: 'a', as_of: 'now', limit: '5', current_only: 'yes' } });
    expect(search.json.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'limit'],
        msg: 'must be a whole number from 1 to 100, sent as a JSON number (not in quotes)',
      }),
      expect.objectContaining({ loc: ['body', 'current_only'], msg: 'must be true or false' }),
    ]);
    const m = await viaMcp('search_memory', { query: 'a', as_of: 'now', limit: 'abc', current_only: 'yes' });
    expect(JSON.stringify(m.body)).toContain('must be a whole number from 1 to 100');
    expect(JSON.stringify(m.body)).toContain('must be true or false');
  });

  it('a read without as_of offers now', async () => {
    const r = await t.call('GET', '/v1/memories', {});
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatchObject({ error: 'SVC_AS_OF_REQUIRED', why: expect.stringContaining('as_of=now') });
    const m = await viaMcp('list_memories', {});
    expect(JSON.stringify(m.body)).toContain('as_of=now');
  });

  it('a write with nothing to write is 422, through both doors', async () => {
    for (const body of [{ space: 's' }, { space: 's', nodes: [], edges: [] }, { space: 's', messages: [] }]) {
      expect((await t.call('POST', '/v1/memories', { body })).status).toBe(422);
    }
    expect((await viaMcp('remember', { space: 's' })).isError).toBe(true);
  });

  it('edge types match case-insensitively; refusals carry allowed and expected', async () => {
    const w = await t.call('POST', '/v1/memories', {
      body: {
        space: 's',
        edges: [
          { source_id: 'a', target_id: 'b', edge_type: 'Causes' },
          { source_id: 'b', target_id: 'a', edge_type: 'LOVES' },
          { source_id: 'b', target_id: 'a', edge_type: 'triggers', lag: 'some day' },
        ],
      },
    });
    expect(w.json.accepted).toBe(1);
    const loves = w.json.refused.find((r: { reason: string }) => r.reason === 'unknown_edge_type');
    expect(loves.allowed).toEqual(expect.arrayContaining(['CAUSES', 'SUPERSEDES', 'MENTIONS']));
    expect(w.json.refused.find((r: { reason: string }) => r.reason === 'invalid_lag').expected).toMatch(/ISO 8601/);
    const g = await t.call('GET', '/v1/memories/a', { query: { as_of: 'now' } });
    expect(g.json.edges.out.map((e: { edge_type: string }) => e.edge_type)).toEqual(['CAUSES']);
  });

  it('a row that could never be in force is refused naming valid_to', async () => {
    const r = await t.call('POST', '/v1/memories', {
      body: { space: 's', nodes: [{ kind: 'claim', statement: 'over before it starts', valid_to: '2020-01-01T00:00:00Z' }] },
    });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(['body', 'nodes', 0, 'valid_to']);
  });

  it('instants outside 1700-2200 name the range, in bodies and queries', async () => {
    const body = await t.call('POST', '/v1/memories', {
      body: { space: 's', nodes: [{ kind: 'claim', asserted_at: '2300-01-01T00:00:00Z' }] },
    });
    expect(body.status).toBe(422);
    expect(body.json.detail[0].msg).toMatch(/1700 and 2200/);
    const query = await t.call('GET', '/v1/memories', { query: { as_of: '1600-01-01' } });
    expect(query.status).toBe(400);
    expect(query.json.detail.why).toMatch(/1700 and 2200/);
  });

  it('"now" is accepted for as_of and valid_at, and certified as the instant used', async () => {
    const before = (await t.call('GET', '/v1/version')).json.now;
    const r = await t.call('GET', '/v1/memories', { query: { as_of: 'now', valid_at: 'now' } });
    const after = (await t.call('GET', '/v1/version')).json.now;
    expect(r.status).toBe(200);
    expect(r.json.certificate.as_of >= before && r.json.certificate.as_of <= after).toBe(true);
    const m = await viaMcp('why', { id: 'a', as_of: 'now' });
    expect(m.body.chain[0].node.id).toBe('a');
    expect((await t.call('GET', '/v1/memories', { query: { valid_at: 'now' } })).json.detail.error).toBe('SVC_AS_OF_REQUIRED');
  });
});
