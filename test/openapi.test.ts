// The OpenAPI document is generated from what the REST door runs, so these check it against the door
// itself: a valid OpenAPI 3.1 document, every route of the table in it with every input field where the
// door reads it, every documented path answered by the live app, and live answers shaped as documented.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { z as zod } from 'zod';
import { openApiDocument } from '../bridge/openapi.ts';
import { DigestSchema, ExportPageSchema, ImportBodySchema, ImportResultSchema } from '../server/admin-schemas.ts';
import { routes } from '../bridge/routes.ts';
import { SERVICE_VERSION } from '../server/version.ts';
import { formatInstant } from '../storage/time.ts';
import { operationNamed, operations } from '../tools/index.ts';
import { locatorOf } from '../tools/input-sources.ts';
import { inputJsonSchema } from '../tools/json-schema.ts';
import { CheckInstallOutputSchema, VersionOutputSchema } from '../tools/output-schemas.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

/** The JSON answer an operation declares; every one the tests shape-check declares one. */
function outputOf(name: string): z.ZodObject {
  const output = operationNamed(name).output;
  if (!output) throw new Error(`${name} declares no output schema`);
  return output;
}

type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; required: boolean }[];
        requestBody?: { content: Record<string, { schema: { properties?: object } }> };
        responses: Record<string, unknown>;
        security?: unknown[];
        tags?: string[];
        'x-operator-only'?: boolean;
      }
    >
  >;
};

const KEY = 'openapi-key';
const OPERATOR = 'openapi-operator-key-0123456789';
let t: TestApp;
let doc: Doc;

beforeAll(async () => {
  t = await startTestApp({ SVC_API_KEYS: `${KEY}=alpha`, SVC_OPERATOR_KEY: OPERATOR });
  const r = await t.call('GET', '/v1/openapi.json');
  expect(r.status).toBe(200);
  doc = r.json as Doc;
});
afterAll(async () => {
  await t?.close();
});

const openApiPath = (p: string): string => p.replace(/:(\w+)/g, '{$1}');

/** Parses a live answer with its documented schema: nothing missing, nothing undocumented. */
function expectShaped(schema: z.ZodType, body: unknown, label: string): void {
  const parsed = schema.safeParse(body);
  expect(parsed.success ? 'ok' : JSON.stringify(parsed.error.issues.slice(0, 3)), label).toBe('ok');
  expect(parsed.data, `${label}: fields the schema does not name`).toEqual(body);
}

describe('GET /v1/openapi.json', () => {
  it('is open and a valid OpenAPI 3.1 document', async () => {
    expect(doc).toEqual(openApiDocument(SERVICE_VERSION));
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(JSON.stringify(doc)).not.toContain('#/$defs');
  });

  it('lists each operation under reads or writes by what it does: resolve_fact, which records a verdict, under both', () => {
    const tagsOf = (name: string): string[] | undefined => {
      for (const methods of Object.values(doc.paths))
        for (const op of Object.values(methods) as { operationId?: string; tags?: string[] }[]) if (op.operationId === name) return op.tags;
      return undefined;
    };
    expect(tagsOf('resolve_fact')).toEqual(['reads', 'writes']);
    expect(tagsOf('list_spaces')).toEqual(['reads']);
    expect(tagsOf('search_memory')).toEqual(['reads']);
    expect(tagsOf('remember')).toEqual(['writes']);
    expect(tagsOf('invalidate_memory')).toEqual(['writes']);
  });

  it('documents every route of the table, with each input field where the REST door reads it', () => {
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      const op = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      const input = inputJsonSchema(operationNamed(route.operation));
      const required = new Set((input.required as string[] | undefined) ?? []);
      const pathNames = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
      for (const field of Object.keys(input.properties as object)) {
        const label = `${route.operation}.${field}`;
        if (pathNames.includes(field)) {
          expect(
            op?.parameters?.find((p) => p.name === field),
            label,
          ).toMatchObject({ in: 'path', required: true });
        } else if (route.from === 'query') {
          expect(
            op?.parameters?.find((p) => p.name === field),
            label,
          ).toMatchObject({ in: 'query', required: required.has(field) });
        } else {
          expect(Object.keys(op?.requestBody?.content['application/json']?.schema.properties ?? {}), label).toContain(field);
        }
      }
      if (route.from === 'body' && pathNames.length === 0) {
        // The body is the very schema the MCP tool advertises.
        const { $schema: _s, ...advertised } = input;
        expect(op?.requestBody?.content['application/json']?.schema, route.operation).toEqual(advertised);
      }
      expect(Object.keys(op?.responses ?? {}), route.operation).toEqual(expect.arrayContaining(['200', '400', '401', '422']));
    }
    expect(doc.paths['/v1/memories/{id}']?.delete?.responses).toHaveProperty('501');
    for (const open of ['/v1/version', '/v1/openapi.json']) expect(doc.paths[open]?.get?.security, open).toEqual([]);
    expect(doc.paths['/v1/check_install']?.get).toBeDefined();
  });

  it('knows where every operation with a route takes its fields from, as the route table does', () => {
    for (const route of routes) {
      const pathNames = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
      const locate = locatorOf(route.operation);
      for (const name of pathNames) expect(locate(name), `${route.operation}.${name}`).toBe('path');
      expect(locate('as_of'), route.operation).toBe(route.from);
    }
    for (const op of operations)
      expect(op.output !== undefined || op.rest.answer !== undefined, `${op.name} has an output schema or answers a file`).toBe(true);
  });

  it('answers every documented path and method on the live app (never the 404 of an unknown route)', async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        const r = await t.call(method.toUpperCase(), path.replace(/\{\w+\}/g, 'x'), { key: KEY, body: method === 'post' ? {} : undefined });
        expect(r.status, `${method} ${path}`).not.toBe(404);
        expect(Object.keys(item[method]?.responses ?? {}), `${method} ${path} documents its status`).toContain(String(r.status));
      }
    }
  });

  it('describes the live answers: each is parsed by its documented schema with nothing left over', async () => {
    const w = await t.call('POST', '/v1/memories', {
      key: KEY,
      body: {
        space: 'user:o',
        nodes: [
          {
            id: 'o1',
            kind: 'claim',
            statement: 'Rain delays the harvest',
            asserted_at: '2024-03-01T00:00:00Z',
            fact_key: 'harvest',
            fact_value: 'late',
          },
          { id: 'o2', kind: 'claim', statement: 'Prices rise' },
        ],
        edges: [
          { source_id: 'o1', target_id: 'o2', edge_type: 'CAUSES', lag: 'P3D' },
          { source_id: 'o1', target_id: 'nowhere', edge_type: 'CAUSES' },
        ],
      },
    });
    expectShaped(outputOf('remember'), w.json, 'remember');
    const asOf = formatInstant(t.ledger.now());
    expectShaped(
      outputOf('declare_fact'),
      (await t.call('POST', '/v1/facts', { key: KEY, body: { fact_key: 'harvest' } })).json,
      'declare_fact',
    );
    const reads: [string, string, string, { query?: Record<string, string>; body?: unknown }][] = [
      ['list_memories', 'GET', '/v1/memories', { query: { as_of: asOf } }],
      ['get_memory', 'GET', '/v1/memories/o1', { query: { as_of: asOf } }],
      ['get_memory', 'GET', '/v1/memories/o1', { query: { as_of: '2000-01-01' } }],
      ['why', 'GET', '/v1/memories/o2/why', { query: { as_of: asOf } }],
      ['search_memory', 'POST', '/v1/search', { body: { query: 'harvest', as_of: asOf } }],
      ['resolve_fact', 'POST', '/v1/resolve', { body: { fact: 'harvest', as_of: asOf } }],
    ];
    for (const [name, method, path, opts] of reads) {
      const r = await t.call(method, path, { key: KEY, ...opts });
      expect(r.status, name).toBe(200);
      expectShaped(outputOf(name), r.json, `${name} ${path}`);
    }
    const retract = await t.call('POST', '/v1/memories/o2/invalidate', { key: KEY, body: { reason: 'the source withdrew it' } });
    expect(retract.status).toBe(200);
    expectShaped(outputOf('invalidate_memory'), retract.json, 'invalidate_memory');
    expectShaped(
      outputOf('invalidate_memory'),
      (await t.call('POST', '/v1/memories/o2/invalidate', { key: KEY, body: { reason: 'again' } })).json,
      'invalidate_memory again',
    );
    const after: [string, string, Record<string, string>][] = [
      ['list_spaces', '/v1/spaces', { as_of: 'now' }],
      ['get_memory', '/v1/memories/o2', { as_of: 'now' }],
      ['get_memory', '/v1/memories/o2', { as_of: 'now', include_invalidated: 'true' }],
      ['list_memories', '/v1/memories', { as_of: 'now', include_invalidated: 'true' }],
      ['list_memories', '/v1/memories', { as_of: 'now', current_only: 'true' }],
    ];
    for (const [name, path, query] of after) {
      const r = await t.call('GET', path, { key: KEY, query });
      expect(r.status, name).toBe(200);
      expectShaped(outputOf(name), r.json, `${name} ${JSON.stringify(query)}`);
    }
    expect(JSON.stringify((await t.call('GET', '/v1/memories/o2', { key: KEY, query: { as_of: 'now' } })).json)).toContain(
      '"reason":"invalidated"',
    );
    expectShaped(VersionOutputSchema, (await t.call('GET', '/v1/version')).json, 'version');
    expectShaped(CheckInstallOutputSchema, (await t.call('GET', '/v1/check_install', { key: KEY })).json, 'check_install');
  });

  it('documents the operator routes as operator only, from the schemas the routes run with', async () => {
    const full = doc as Doc & { components: { securitySchemes: Record<string, Record<string, unknown>> } };
    expect(full.components.securitySchemes.operator).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(String(full.components.securitySchemes.operator?.description)).toContain('SVC_OPERATOR_KEY');
    const admin: [string, string][] = [
      ['get', '/admin/tenants/{tenant}/rows'],
      ['post', '/admin/tenants/{tenant}/rows'],
      ['get', '/admin/tenants/{tenant}/digest'],
      ['delete', '/admin/tenants/{tenant}'],
      ['get', '/admin/tenants/{tenant}/placement'],
    ];
    for (const [method, path] of admin) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op?.security, `${method} ${path}`).toEqual([{ operator: [] }]);
      expect(op?.tags).toEqual(['operator']);
      expect(op?.['x-operator-only']).toBe(true);
      expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
    }
    // Every path outside /admin keeps the tenant scheme (the document's default), never the operator's.
    for (const [path, item] of Object.entries(doc.paths))
      if (!path.startsWith('/admin/'))
        for (const op of Object.values(item)) expect(JSON.stringify(op.security ?? []), path).not.toContain('operator');
    const { $schema: _s, ...body } = zod.toJSONSchema(ImportBodySchema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' });
    expect(doc.paths['/admin/tenants/{tenant}/rows']?.post?.requestBody?.content['application/json']?.schema).toEqual(body);
    expect(Object.keys(doc.paths['/admin/tenants/{tenant}/rows']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['409', '413', '422']),
    );

    // Live: the operator key is answered as documented; a tenant key is refused.
    expect(
      (
        await t.call('POST', '/v1/memories', {
          key: KEY,
          body: { space: 'user:op', nodes: [{ id: 'op1', kind: 'claim', statement: 'x' }] },
        })
      ).status,
    ).toBe(200);
    const page = await t.call('GET', '/admin/tenants/alpha/rows', { key: OPERATOR, query: { limit: 5 } });
    expect(page.status).toBe(200);
    expectShaped(ExportPageSchema, page.json, 'admin rows');
    const again = await t.call('POST', '/admin/tenants/alpha/rows', { key: OPERATOR, body: { rows: page.json.rows } });
    expect(again.status).toBe(200);
    expectShaped(ImportResultSchema, again.json, 'admin import');
    expect(again.json.skipped).toBe(page.json.rows.length);
    expectShaped(DigestSchema, (await t.call('GET', '/admin/tenants/alpha/digest', { key: OPERATOR })).json, 'admin digest');
    expect((await t.call('GET', '/admin/tenants/alpha/rows', { key: KEY })).status).toBe(403);
  });
});
