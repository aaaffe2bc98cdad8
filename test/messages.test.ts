// Messages end to end through the REST door, on real Kuzu in a temp folder: episodes and extracted
// blocks, idempotent re-sends, no look-ahead, 422s, and a model extractor that fails on one message.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { inMemoryClient } from './helpers/mcp-client.ts';
import type { Extractor } from '../extract/types.ts';
import { rememberMessages } from '../tools/remember-messages.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const msg = (content: string, observed_at: string, source_description = 'chat with Dana') => ({ content, observed_at, source_description });
const replay = (at: string) => ({ declared_captured_at: at, reason: 'replay' });
const list = async (space: string, as_of = '2030-01-01') =>
  (await t.call('GET', '/v1/memories', { query: { space, as_of } })).json.items as any[];
const edgesOf = async (id: string, as_of = '2030-01-01') => {
  const g = (await t.call('GET', `/v1/memories/${encodeURIComponent(id)}`, { query: { as_of } })).json;
  return { in: g.edges.in as any[], out: g.edges.out as any[] };
};

describe('POST /v1/memories with messages', () => {
  const space = 'user:e2e';
  const body = {
    space,
    backfill: replay('2024-07-01T09:00:00Z'),
    messages: [
      msg(
        'The heatwave will push electricity prices up next week because demand for air conditioning spikes. Acme Power reported record load on Monday.',
        '2024-07-01T09:00:00Z',
      ),
    ],
  };
  let first: any;

  it('writes an episode, its blocks, entities and causal link, and lists them in episodes', async () => {
    const r = await t.call('POST', '/v1/memories', { body });
    expect(r.status).toBe(200);
    first = r.json;
    expect(first.refused).toEqual([]);
    expect(first.episodes).toHaveLength(1);
    const ep = first.episodes[0];
    expect(ep).toMatchObject({ message: 0, observed_at: '2024-07-01T09:00:00.000000Z' });
    expect(ep.blocks).toHaveLength(3);
    expect(ep.entities).toHaveLength(1);
    const items = await list(space);
    const byId = new Map(items.map((x) => [x.id, x]));
    expect(byId.get(ep.episode_id)).toMatchObject({ kind: 'episode', payload: { source: 'chat with Dana' } });
    expect(byId.get(ep.entities[0])).toMatchObject({ kind: 'entity', statement: 'Acme Power' });
    const blocks = ep.blocks.map((id: string) => byId.get(id));
    expect(blocks.map((b: any) => b.kind).sort()).toEqual(['claim', 'claim', 'prediction']);
    expect(blocks.every((b: any) => b.asserted_at === '2024-07-01T09:00:00.000000Z')).toBe(true);
    // Every block points back to its episode; the episode mentions the entity.
    const epEdges = await edgesOf(ep.episode_id);
    expect(
      epEdges.in
        .filter((e) => e.edge_type === 'DERIVED_FROM')
        .map((e) => e.source_id)
        .sort(),
    ).toEqual([...ep.blocks].sort());
    expect(epEdges.out.filter((e) => e.edge_type === 'MENTIONS').map((e) => e.target_id)).toEqual(ep.entities);
    const causal = ep.edges.find((e: any) => e.edge_type === 'CAUSES');
    expect(byId.get(causal.source_id).statement).toBe('demand for air conditioning spikes');
    expect(byId.get(causal.target_id).statement).toBe('The heatwave will push electricity prices up next week');
    const row = (await edgesOf(causal.target_id)).in.find((e) => e.edge_type === 'CAUSES');
    expect(row.mechanism).toBe('because demand for air conditioning spikes');
    // Backfilled: visible as of the observed instant, hidden just before it.
    expect((await list(space, '2024-07-01T09:00:00Z')).length).toBe(items.length);
    expect(await list(space, '2024-07-01T08:59:59Z')).toEqual([]);
  });

  it('re-sending the same body writes nothing and answers already_remembered', async () => {
    const before = (await list(space)).length;
    const r = await t.call('POST', '/v1/memories', { body });
    expect(r.status).toBe(200);
    expect(r.json.accepted).toBe(0);
    expect(r.json.warnings.length).toBeGreaterThan(0);
    expect(r.json.warnings.every((w: any) => w.warning === 'already_remembered')).toBe(true);
    expect(r.json.episodes[0]).toEqual(first.episodes[0]);
    expect((await list(space)).length).toBe(before);
  });

  it('the same statement and entity said later resolve onto the existing blocks; a new episode records it', async () => {
    const r = await t.call('POST', '/v1/memories', {
      body: {
        space,
        backfill: replay('2024-07-03T10:00:00Z'),
        messages: [msg('Demand for air conditioning spikes. Acme Power is worried.', '2024-07-03T10:00:00Z', 'chat with Sam')],
      },
    });
    const ep = r.json.episodes[0];
    expect(ep.episode_id).not.toBe(first.episodes[0].episode_id);
    const oldEp = first.episodes[0];
    expect(ep.blocks).toContain(
      oldEp.blocks.find((id: string) => id !== undefined && oldEp.edges.some((e: any) => e.edge_type === 'CAUSES' && e.source_id === id)),
    );
    expect(ep.entities).toEqual(oldEp.entities);
    expect(r.json.warnings).toEqual(expect.arrayContaining([{ id: oldEp.entities[0], kind: 'node', warning: 'already_remembered' }]));
    const entities = (await list(space)).filter((x) => x.kind === 'entity');
    expect(entities.map((x) => x.statement)).toEqual(['Acme Power']);
  });

  it('one statement in two messages of one request is one block', async () => {
    const r = await t.call('POST', '/v1/memories', {
      body: {
        space: 'user:twice',
        messages: [msg('Zed Corp will open a plant.', '2024-01-01T00:00:00Z'), msg('Zed Corp will open a plant!', '2024-01-02T00:00:00Z')],
      },
    });
    expect(r.json.refused).toEqual([]);
    expect(r.json.episodes).toHaveLength(2);
    expect(r.json.episodes[0].blocks).toEqual(r.json.episodes[1].blocks);
    expect(r.json.episodes[0].entities).toEqual(r.json.episodes[1].entities);
    const items = await list('user:twice');
    expect(items.filter((x) => x.kind === 'prediction')).toHaveLength(1);
  });

  it('another space gets its own blocks', async () => {
    const r = await t.call('POST', '/v1/memories', {
      body: { space: 'user:other', messages: [msg('Zed Corp will open a plant.', '2024-01-01T00:00:00Z')] },
    });
    const twice = await list('user:twice');
    expect(twice.map((x) => x.id)).not.toContain(r.json.episodes[0].blocks[0]);
  });
});

describe('model calls', () => {
  it('run at most 4 at a time, and a message whose extraction throws is refused alone', async () => {
    let inFlight = 0;
    let peak = 0;
    const extractor: Extractor = {
      id: 'openai:counting',
      async extract(r) {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((res) => setTimeout(res, 5));
        inFlight--;
        if (r.content.includes('fail')) throw new Error('model timed out');
        return { blocks: [{ kind: 'claim', statement: r.content }], entities: [], links: [] };
      },
    };
    const ctx = { ledger: t.ledger, tenant: t.config.tenant, services: { ...t.started.services, extractor } };
    const messages = Array.from({ length: 12 }, (_, i) =>
      msg(i === 5 ? 'please fail here' : `statement number ${i}`, `2024-05-0${1 + (i % 9)}T00:00:00Z`),
    );
    const out = await rememberMessages({ space: 'user:conc', messages }, ctx);
    expect(peak).toBe(4);
    expect(out.refusedMessages).toEqual([{ id: 'messages[5]', kind: 'message', reason: 'extraction_failed: model timed out' }]);
    expect(out.episodes.map((e) => e.message)).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
    const items = await list('user:conc');
    expect(items.filter((x) => x.kind === 'claim')).toHaveLength(11);
    expect(items.some((x) => x.statement === 'please fail here')).toBe(false);
  });
});

describe('through MCP', () => {
  it('the remember tool takes messages and answers what the REST door answers', async () => {
    const client = await inMemoryClient({ ledger: t.ledger, tenant: t.config.tenant, services: t.started.services });
    const body = {
      space: 'user:mcp',
      messages: [msg('Because the ferry was cancelled, Nora Quist will arrive late.', '2024-02-02T10:00:00Z')],
    };
    const r = await client.callTool({ name: 'remember', arguments: body });
    expect(r.isError).toBeFalsy();
    const viaMcp = r.structuredContent as any;
    expect(viaMcp.accepted).toBeGreaterThan(0);
    expect(viaMcp.episodes[0].edges.some((e: any) => e.edge_type === 'CAUSES')).toBe(true);
    const viaRest = (await t.call('POST', '/v1/memories', { body })).json;
    expect(viaRest.accepted).toBe(0);
    expect(viaRest.episodes).toEqual(viaMcp.episodes);
    await client.close();
  });
});

describe('no look-ahead', () => {
  const space = 'user:time';

  beforeAll(async () => {
    // Known from March on: an entity with a lower-case name only resolution can find, and a claim.
    await t.call('POST', '/v1/memories', {
      body: {
        space,
        backfill: replay('2024-03-01T00:00:00Z'),
        nodes: [{ id: 'ent-wheat', kind: 'entity', statement: 'wheat', asserted_at: '2024-03-01T00:00:00Z' }],
      },
    });
    await t.call('POST', '/v1/memories', {
      body: { space, backfill: replay('2024-05-01T00:00:00Z'), messages: [msg('The harvest failed.', '2024-05-01T00:00:00Z')] },
    });
  });

  it('an entity first known later is not linked to an earlier message', async () => {
    const r = await t.call('POST', '/v1/memories', {
      body: { space, backfill: replay('2024-02-01T00:00:00Z'), messages: [msg('the wheat looks thin this year.', '2024-02-01T00:00:00Z')] },
    });
    expect(r.json.episodes[0].entities).toEqual([]);
    const later = await t.call('POST', '/v1/memories', {
      body: { space, backfill: replay('2024-04-01T00:00:00Z'), messages: [msg('the wheat looks thin this year.', '2024-04-01T00:00:00Z')] },
    });
    expect(later.json.episodes[0].entities).toEqual(['ent-wheat']);
  });

  it('a statement first known later is not the block of an earlier message, and nothing clashes', async () => {
    const known = (await list(space)).find((x) => x.statement === 'The harvest failed')!;
    const r = await t.call('POST', '/v1/memories', {
      body: { space, backfill: replay('2024-01-15T00:00:00Z'), messages: [msg('The harvest failed.', '2024-01-15T00:00:00Z')] },
    });
    expect(r.json.refused).toEqual([]);
    const early = r.json.episodes[0].blocks[0];
    expect(early).not.toBe(known.id);
    const asOfJan = await list(space, '2024-01-31');
    expect(asOfJan.map((x) => x.id)).toContain(early);
    // Said again in June, it resolves onto the earliest block known then.
    const june = await t.call('POST', '/v1/memories', {
      body: { space, backfill: replay('2024-06-01T00:00:00Z'), messages: [msg('The harvest failed.', '2024-06-01T00:00:00Z')] },
    });
    expect(june.json.episodes[0].blocks).toEqual([early]);
  });
});

describe('message validation', () => {
  const post = (messages: unknown, extra: Record<string, unknown> = {}) =>
    t.call('POST', '/v1/memories', { body: { space: 'user:v', messages, ...extra } });
  const loc = (r: any) => r.json.detail.map((d: any) => d.loc.join('.'));

  it('empty or blank content: 422 naming the field', async () => {
    for (const content of ['', '   ']) {
      const r = await post([msg(content, '2024-01-01T00:00:00Z')]);
      expect(r.status).toBe(422);
      expect(loc(r)).toContain('body.messages.0.content');
    }
  });

  it('observed_at without an offset, or in the future: 422 naming the field', async () => {
    const a = await post([msg('x y', '2024-01-01T00:00:00')]);
    expect(a.status).toBe(422);
    expect(loc(a)).toContain('body.messages.0.observed_at');
    const b = await post([msg('ok', '2024-01-01T00:00:00Z'), msg('later', '2999-01-01T00:00:00Z')]);
    expect(b.status).toBe(422);
    expect(loc(b)).toContain('body.messages.1.observed_at');
    expect((await list('user:v')).length).toBe(0);
  });

  it('observed_at later than the declared backfill instant: 422 (rows would be known before they were said)', async () => {
    const r = await post([msg('a b c', '2024-01-01T00:00:00Z'), msg('d e f', '2024-03-01T00:00:00Z')], {
      backfill: replay('2024-02-01T00:00:00Z'),
    });
    expect(r.status).toBe(422);
    expect(loc(r)).toEqual(['body.messages.1.observed_at']);
  });

  it('messages together with nodes: 422', async () => {
    const r = await post([msg('x y', '2024-01-01T00:00:00Z')], { nodes: [{ kind: 'claim', statement: 's' }] });
    expect(r.status).toBe(422);
    expect(loc(r)).toContain('body.messages');
  });
});

describe('model extractor through the server (fake OpenAI-compatible server)', () => {
  let model: TestApp;
  let server: Server;
  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const text = JSON.stringify(body.messages);
      res.setHeader('content-type', 'application/json');
      if (text.includes('EXPLODE')) {
        res.statusCode = 400;
        res.end(JSON.stringify({ error: { message: 'bad request from model', type: 'invalid_request_error' } }));
        return;
      }
      const content = text.includes('GARBLE')
        ? 'not json at all'
        : JSON.stringify({
            blocks: [
              { kind: 'claim', statement: 'Rain fell in Oslo', negated: false },
              { kind: 'claim', statement: 'The roads flooded', negated: false },
            ],
            entities: ['Oslo'],
            links: [{ cause: 0, effect: 1, type: 'CAUSES', mechanism: 'so the roads flooded' }],
          });
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    model = await startTestApp({ SVC_EXTRACTOR: 'openai:fake', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: 'k' });
  });
  afterAll(async () => {
    await model.close();
    await new Promise((r) => server.close(r));
  });

  it('a failing or malformed model answer refuses that message only; the request answers 200', async () => {
    const r = await model.call('POST', '/v1/memories', {
      body: {
        space: 'user:m',
        messages: [
          msg('It rained in Oslo, so the roads flooded.', '2024-01-01T00:00:00Z'),
          msg('GARBLE this one', '2024-01-01T01:00:00Z'),
          msg('EXPLODE this one', '2024-01-01T02:00:00Z'),
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.refused.map((x: any) => [x.id, x.kind])).toEqual([
      ['messages[1]', 'message'],
      ['messages[2]', 'message'],
    ]);
    expect(r.json.refused.every((x: any) => /^extraction_failed: /.test(x.reason))).toBe(true);
    expect(r.json.episodes.map((e: any) => e.message)).toEqual([0]);
    const items = (await model.call('GET', '/v1/memories', { query: { space: 'user:m', as_of: '2030-01-01' } })).json.items;
    expect(items.map((x: any) => x.kind).sort()).toEqual(['claim', 'claim', 'entity', 'episode']);
    expect(items.filter((x: any) => x.kind === 'episode')).toHaveLength(1);
    const check = (await model.call('GET', '/v1/check_install')).json;
    expect(check.checks.find((c: any) => c.name === 'extractor')).toMatchObject({
      ok: true,
      detail: expect.stringContaining('openai:fake'),
    });
  });
});
