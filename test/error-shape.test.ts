// One error shape through both doors: every 4xx and 5xx body is {detail}, a non-422 detail always has
// `error` and `why`, a 422 item always has `input`, and every 401 (REST and the MCP door) names Bearer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorAnswer, shownInput } from '../tools/error-body.ts';
import { MAX_INPUT_CHARS } from '../tools/errors.ts';
import { invalidInput, SvcError } from '../tools/errors.ts';
import { locatorOf } from '../tools/input-sources.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const KEY = 'errors-key';
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: `${KEY}=alpha` });
});
afterAll(async () => {
  await t?.close();
});

const AS_OF = '2024-06-01T00:00:00Z';

describe('errorAnswer (door-neutral)', () => {
  it('maps every code to its status with {error, why}', () => {
    const cases: [SvcError, number][] = [
      [new SvcError('SVC_AS_OF_REQUIRED', 'pass as_of'), 400],
      [new SvcError('SVC_UNAUTHORIZED', 'key'), 401],
      [new SvcError('not_found', 'no such block'), 404],
      [new SvcError('payload_too_large', 'big'), 413],
      [new SvcError('append_only', 'never'), 501],
      [new SvcError('unavailable', 'down'), 503],
      [new SvcError('invalid_json', 'bad'), 400],
    ];
    for (const [error, status] of cases) {
      expect(errorAnswer(error, locatorOf('remember'))).toEqual({ status, body: { detail: { error: error.code, why: error.message } } });
    }
    const crash = errorAnswer(new TypeError('boom'), locatorOf('remember'));
    expect(crash.status).toBe(500);
    expect(crash.body).toEqual({ detail: { error: 'internal', why: expect.any(String) } });
    expect(JSON.stringify(crash.body)).not.toContain('boom');
  });

  it('gives every 422 item an input: the value sent, cut when long, null when missing', () => {
    const long = 'x'.repeat(MAX_INPUT_CHARS + 50);
    const raw = { space: 's', nodes: [{ kind: 'claim', statement: long, payload: { deep: 'y'.repeat(500) } }], edges: 'no' };
    const answer = errorAnswer(
      invalidInput([
        { type: 'invalid_type', loc: ['edges'], msg: 'expected array' },
        { type: 'too_big', loc: ['nodes', 0, 'statement'], msg: 'too long' },
        { type: 'invalid_type', loc: ['nodes', 0, 'payload'], msg: 'bad' },
        { type: 'invalid_type', loc: ['nodes', 0, 'id'], msg: 'required' },
        { type: 'custom', loc: ['space'], msg: 'given by the handler', input: 'kept' },
      ]),
      locatorOf('remember'),
      raw,
    );
    expect(answer.status).toBe(422);
    const items = answer.body.detail as { loc: unknown[]; input: unknown }[];
    expect(items.map((i) => i.loc[0])).toEqual(['body', 'body', 'body', 'body', 'body']);
    expect(items.map((i) => i.input)).toEqual([
      'no',
      `${'x'.repeat(MAX_INPUT_CHARS)}…`,
      expect.stringMatching(/^\{"deep":"y+…$/),
      null,
      'kept',
    ]);
    for (const i of items) expect(Object.keys(i).sort()).toEqual(['input', 'loc', 'msg', 'type']);
    expect(shownInput({ a: 1 })).toEqual({ a: 1 });
    expect(shownInput([1, 2])).toEqual([1, 2]);
  });

  it('turns a bad query instant into 400 SVC_BAD_TIMESTAMP with why and loc; a bad body instant stays 422', () => {
    const issue = { type: 'timestamp', loc: ['as_of'], msg: 'must have an offset' };
    expect(errorAnswer(invalidInput([issue]), locatorOf('list_memories'), { as_of: 'x' })).toEqual({
      status: 400,
      body: { detail: { error: 'SVC_BAD_TIMESTAMP', why: 'as_of: must have an offset', loc: ['query', 'as_of'] } },
    });
    expect(errorAnswer(invalidInput([issue]), locatorOf('search_memory'), { as_of: 'x' }).status).toBe(422);
    expect(errorAnswer(invalidInput([{ type: 't', loc: ['id'], msg: 'm' }]), locatorOf('get_memory')).body.detail).toMatchObject([
      { loc: ['path', 'id'] },
    ]);
  });
});

describe('over HTTP', () => {
  it('answers every kind of error as {detail} with the documented keys', async () => {
    const cases: [string, string, { body?: unknown; raw?: string; query?: Record<string, string>; key?: string }, number, string][] = [
      ['GET', '/v1/memories', { key: KEY }, 400, 'SVC_AS_OF_REQUIRED'],
      ['GET', '/v1/memories', { key: KEY, query: { as_of: '2024-06-01T00:00:00' } }, 400, 'SVC_BAD_TIMESTAMP'],
      ['POST', '/v1/memories', { key: KEY, raw: '{nope' }, 400, 'invalid_json'],
      ['GET', '/v1/nowhere', { key: KEY }, 404, 'not_found'],
      ['DELETE', '/v1/memories/x', { key: KEY }, 501, 'append_only'],
      ['GET', '/v1/memories', { query: { as_of: AS_OF } }, 401, 'SVC_UNAUTHORIZED'],
      ['GET', '/v1/memories', { key: 'wrong', query: { as_of: AS_OF } }, 401, 'SVC_UNAUTHORIZED'],
    ];
    for (const [method, path, opts, status, error] of cases) {
      const r = await t.call(method, path, opts);
      const label = `${method} ${path} ${JSON.stringify(opts)}`;
      expect(r.status, label).toBe(status);
      expect(r.json.detail.error, label).toBe(error);
      expect(typeof r.json.detail.why, label).toBe('string');
      expect(r.json.detail.why.length, label).toBeGreaterThan(0);
      expect(Object.keys(r.json.detail).sort(), label).toEqual(error === 'SVC_BAD_TIMESTAMP' ? ['error', 'loc', 'why'] : ['error', 'why']);
      expect(r.headers.get('www-authenticate'), label).toBe(status === 401 ? 'Bearer' : null);
    }
  });

  it('gives 422 items {type, loc, msg, input} with input the value sent, or null for a missing field', async () => {
    const r = await t.call('POST', '/v1/memories', { key: KEY, body: { nodes: [{ kind: 7, statement: 's'.repeat(300) }], edges: {} } });
    expect(r.status).toBe(422);
    const byLoc = new Map((r.json.detail as { loc: unknown[]; input: unknown }[]).map((i) => [i.loc.join('.'), i]));
    for (const i of byLoc.values()) expect(Object.keys(i).sort()).toEqual(['input', 'loc', 'msg', 'type']);
    expect(byLoc.get('body.space')?.input).toBeNull();
    expect(byLoc.get('body.nodes.0.kind')?.input).toBe(7);
    expect(byLoc.get('body.edges')?.input).toEqual({});
    const q = await t.call('GET', '/v1/memories', { key: KEY, query: { as_of: AS_OF, limit: '5000' } });
    expect(q.status).toBe(422);
    expect(q.json.detail).toEqual([expect.objectContaining({ loc: ['query', 'limit'], input: '5000' })]);
  });

  it('sends WWW-Authenticate: Bearer with the same 401 body at the MCP door', async () => {
    for (const path of ['/mcp', '/mcp/app/user%3A1']) {
      const res = await t.app.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate'), path).toBe('Bearer');
      expect(await res.json(), path).toEqual({ detail: { error: 'SVC_UNAUTHORIZED', why: expect.stringContaining('Bearer') } });
    }
  });
});
