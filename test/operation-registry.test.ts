// One list, derived everywhere: every operation in tools/index.ts declares its REST route, its effect and
// what it answers, and is served by both doors from that declaration (a REST route, an OpenAPI
// operation, an MCP tool whose annotations say the declared effect), so none can be half-registered.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../bridge/openapi.ts';
import { routes } from '../bridge/routes.ts';
import { SERVICE_VERSION } from '../server/version.ts';
import { operations } from '../tools/index.ts';
import { pathFields } from '../tools/operation.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { inMemoryClient } from './helpers/mcp-client.ts';

let t: TestApp;
let client: Client;

beforeAll(async () => {
  t = await startTestApp();
  client = await inMemoryClient({ ledger: t.ledger, tenant: t.config.tenant, services: t.started.services });
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe('the operation registry', () => {
  it('gives every operation a distinct name, a REST route of its own, an effect and an answer', () => {
    expect(new Set(operations.map((o) => o.name)).size).toBe(operations.length);
    expect(new Set(operations.map((o) => `${o.rest.method} ${o.rest.path}`)).size).toBe(operations.length);
    for (const op of operations) {
      expect(['GET', 'POST'], op.name).toContain(op.rest.method);
      expect(op.rest.path, op.name).toMatch(/^\/v1\/[a-z]/);
      expect(['query', 'body'], op.name).toContain(op.rest.from);
      // A path segment fills a field of the input schema; a stray one would be dropped as unknown.
      for (const field of pathFields(op.rest)) expect(Object.keys(op.input.shape), `${op.name} :${field}`).toContain(field);
      expect(typeof op.effect.readOnly, op.name).toBe('boolean');
      if (op.effect.readOnly) expect(op.effect.destructive, `${op.name}: a read destroys nothing`).not.toBe(true);
      expect(op.output !== undefined || op.rest.answer !== undefined, `${op.name} answers JSON or a file`).toBe(true);
    }
  });

  it('routes and documents each operation exactly as it declares', () => {
    expect(routes.map((r) => r.operation)).toEqual(operations.map((o) => o.name));
    const doc = openApiDocument(SERVICE_VERSION) as { paths: Record<string, Record<string, { operationId?: string }>> };
    for (const op of operations) {
      const route = routes.find((r) => r.operation === op.name);
      expect(route && { method: route.method, path: route.path, from: route.from }, op.name).toEqual({
        method: op.rest.method,
        path: op.rest.path,
        from: op.rest.from,
      });
      expect(route?.respond !== undefined, `${op.name}: a file answer has its responder`).toBe(op.rest.answer !== undefined);
      const path = op.rest.path.replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[path]?.[op.rest.method.toLowerCase()]?.operationId, op.name).toBe(op.name);
    }
  });

  it('registers every operation as an MCP tool whose annotations say its declared effect', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(operations.map((o) => o.name).sort());
    for (const op of operations) {
      const a = tools.find((x) => x.name === op.name)?.annotations;
      expect(a?.readOnlyHint, op.name).toBe(op.effect.readOnly);
      expect(a?.openWorldHint, op.name).toBe(false);
      if (op.effect.readOnly) {
        expect(a?.destructiveHint, op.name).toBeUndefined();
      } else {
        expect(a?.destructiveHint, op.name).toBe(op.effect.destructive ?? false);
        expect(a?.idempotentHint, op.name).toBe(op.effect.idempotent ?? false);
      }
    }
  });
});
