// The tool list every agent carries in its context on every turn: within a byte budget, and portable by
// the rules the MCP Inspector CLI's `--strict` mode applies to tool schemas (2.12: a bare boolean where a
// schema is expected, a `type` array, a `$ref` outside the document, a schema with no validation keyword).
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HIDDEN_FIELDS } from '../server/mcp/model-schema.ts';
import { operations } from '../tools/index.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { inMemoryClient } from './helpers/mcp-client.ts';

/** Compact JSON of the tools/list result. */
const BUDGET_BYTES = 16 * 1024;

let t: TestApp;
let client: Client;
let confined: Client;

beforeAll(async () => {
  t = await startTestApp();
  const ctx = { ledger: t.ledger, tenant: t.config.tenant, services: t.started.services };
  client = await inMemoryClient(ctx);
  confined = await inMemoryClient({ ...ctx, confinedSpace: 'user:c' });
});
afterAll(async () => {
  await client?.close();
  await confined?.close();
  await t?.close();
});

type Node = Record<string, unknown>;
interface Finding {
  tool: string;
  path: string;
  rule: string;
}

const BOOLEAN_VALUED = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);
const ONE = ['items', 'contains', 'not', 'propertyNames', 'if', 'then', 'else', ...BOOLEAN_VALUED, 'contentSchema'];
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const MAPS = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'];
const CONSTRAINING = new Set([
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength',
  'pattern', 'format', 'contentMediaType', 'contentEncoding', 'contentSchema', 'maxItems', 'minItems', 'uniqueItems', 'maxContains',
  'minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired', 'allOf', 'anyOf', 'oneOf', 'not', 'items',
  'prefixItems', 'contains', 'additionalItems', 'unevaluatedItems', 'properties', 'patternProperties', 'additionalProperties',
  'unevaluatedProperties', 'propertyNames', 'dependentSchemas', 'dependencies', '$ref', '$dynamicRef', '$recursiveRef',
]); // prettier-ignore

/** The Inspector's strict-mode schema rules, applied to one schema. */
function lint(tool: string, node: unknown, path: string, keyword: string | undefined, out: Finding[]): void {
  if (typeof node === 'boolean') {
    if (!keyword || !BOOLEAN_VALUED.has(keyword)) out.push({ tool, path, rule: 'boolean-schema' });
    return;
  }
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
  const s = node as Node;
  if (Array.isArray(s.type)) out.push({ tool, path, rule: 'type-union' });
  if (typeof s.$ref === 'string' && !s.$ref.startsWith('#')) out.push({ tool, path, rule: 'remote-ref' });
  const constrains = Object.keys(s).some((k) => CONSTRAINING.has(k)) || ('if' in s && ('then' in s || 'else' in s));
  if (!constrains && keyword !== 'not') out.push({ tool, path, rule: 'untyped-schema' });
  for (const key of MAPS)
    if (s[key] && typeof s[key] === 'object')
      for (const [name, sub] of Object.entries(s[key] as Node)) lint(tool, sub, `${path}.${key}.${name}`, key, out);
  for (const key of MANY)
    if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((sub, i) => lint(tool, sub, `${path}.${key}[${i}]`, key, out));
  for (const key of ONE) {
    if (!(key in s)) continue;
    if (key === 'items' && Array.isArray(s.items))
      (s.items as unknown[]).forEach((sub, i) => lint(tool, sub, `${path}.items[${i}]`, key, out));
    else lint(tool, s[key], `${path}.${key}`, key, out);
  }
}

function fieldNames(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => fieldNames(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Node)) {
      if (k === 'properties' && v && typeof v === 'object') Object.keys(v).forEach((f) => out.add(f));
      fieldNames(v, out);
    }
  }
  return out;
}

describe('tools/list', () => {
  it(`fits in ${BUDGET_BYTES} bytes of compact JSON, at the tenant address and at an app-scoped one`, async () => {
    for (const c of [client, confined]) {
      const listing = await c.listTools();
      const bytes = Buffer.byteLength(JSON.stringify({ tools: listing.tools }));
      expect(listing.tools.length).toBe(operations.length);
      expect(bytes).toBeLessThanOrEqual(BUDGET_BYTES);
    }
  });

  it('passes the Inspector strict-mode schema rules with zero findings', async () => {
    const findings: Finding[] = [];
    for (const tool of (await client.listTools()).tools) {
      lint(tool.name, tool.inputSchema, 'inputSchema', undefined, findings);
      if (tool.outputSchema) lint(tool.name, tool.outputSchema, 'outputSchema', undefined, findings);
    }
    expect(findings).toEqual([]);
  });

  it('the rules find what they are meant to find', () => {
    const findings: Finding[] = [];
    lint(
      'x',
      { type: 'object', properties: { a: {}, b: { type: ['string', 'null'] }, c: true, d: { $ref: 'http://x/y' } } },
      's',
      undefined,
      findings,
    );
    expect(findings.map((f) => f.rule)).toEqual(['untyped-schema', 'type-union', 'boolean-schema', 'remote-ref']);
  });

  it('offers no field that must never be sent, yet a row that sends captured_at is still refused by name', async () => {
    for (const tool of (await client.listTools()).tools)
      for (const hidden of HIDDEN_FIELDS) expect([...fieldNames(tool.inputSchema)], tool.name).not.toContain(hidden);
    const r = await client.callTool({
      name: 'remember',
      arguments: { space: 'user:h', nodes: [{ id: 'h1', kind: 'claim', statement: 'x', captured_at: '2024-01-01T00:00:00Z' }] },
    });
    expect(r.isError).toBeFalsy();
    expect((r.content as { text: string }[])[0]!.text).toMatch(/refused 1 \(captured_at_not_allowed\)/);
  });

  it('describes every tool for a model, and declares no output schema (the text block carries the answer)', async () => {
    for (const tool of (await client.listTools()).tools) {
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(40);
      expect(tool.description?.length ?? 0, tool.name).toBeLessThan(500);
      expect(tool.outputSchema, tool.name).toBeUndefined();
    }
  });
});
