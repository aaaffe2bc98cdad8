// The agent door's tools, generated from the operation registry: one MCP tool per operation, calling
// `runOperation` exactly as the REST door does. Nothing here knows a particular operation.
import { McpServer, type CallToolResult, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { Context } from '../../tools/context.ts';
import { operations } from '../../tools/index.ts';
import { inputJsonSchema, type JsonSchema } from '../../tools/json-schema.ts';
import { runOperation, type AnyOperation } from '../../tools/operation.ts';
import { SERVICE_NAME, SERVICE_VERSION } from '../version.ts';
import { archiveResult } from './archive.ts';
import { errorResult } from './errors.ts';
import { annotationsOf, describeEffect, INSTRUCTIONS } from './hints.ts';
import { modelSchema } from './model-schema.ts';
import { summarize } from './render.ts';

const AS_OF_NOTE = ' Needs as_of: "now" for what is known at present, an earlier instant to replay what was known then.';

const schemaCache = new Map<string, JsonSchema>();

/**
 * The JSON Schema agents read: the operation's input (tools/json-schema.ts) made compact and portable for
 * a model (./model-schema.ts), without `space` at an app-scoped address. Converted once per process.
 */
export function advertisedSchema(op: AnyOperation, confined: boolean): JsonSchema {
  const key = `${op.name}\u001f${confined && op.confinable}`;
  const cached = schemaCache.get(key);
  if (cached) return cached;
  const json = modelSchema(inputJsonSchema(op));
  if (confined && op.confinable) {
    const properties = { ...(json.properties as Record<string, unknown> | undefined) };
    delete properties.space;
    json.properties = properties;
    if (Array.isArray(json.required)) json.required = json.required.filter((f) => f !== 'space');
  }
  schemaCache.set(key, json);
  return json;
}

/**
 * Advertises the operation's JSON Schema but lets every argument through: `runOperation` is the one
 * validator, so a missing as_of is SVC_AS_OF_REQUIRED and a bad field the same 422 issues as over REST,
 * never an SDK-worded "Invalid arguments".
 *
 * No tool declares an output schema: the ten schemas cost 27 KB of every agent's context on every turn
 * (half the listing), a model reads the text block rather than the schema, and a strict client holds
 * structuredContent to a declared schema and throws on any drift. structuredContent is still the REST
 * body exactly (the OpenAPI document describes it, and the tests hold every answer to its schema).
 */
function passThrough(json: JsonSchema): StandardSchemaWithJSON<Record<string, unknown>> {
  return {
    '~standard': {
      version: 1,
      vendor: 'memory-ledger',
      validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

function describe(op: AnyOperation, confinedSpace: string | undefined): string {
  let text = describeEffect(op);
  if (op.requiresAsOf && !/\bas_of\b/.test(text)) text += AS_OF_NOTE;
  if (confinedSpace !== undefined && !op.confinable) {
    return `${text} Not available at this app-scoped address: it acts on the whole tenant, beyond the space "${confinedSpace}". Use /mcp with the key.`;
  }
  if (confinedSpace !== undefined) {
    text += ` This address is confined to the space "${confinedSpace}": every row read or written is in that space, and nothing outside it is visible.`;
  }
  return text;
}

/** Runs one operation for a tool call and shapes its result (or error) for MCP. */
export async function callOperation(op: AnyOperation, args: unknown, ctx: Context): Promise<CallToolResult> {
  let result: unknown;
  try {
    result = await runOperation(op, args ?? {}, ctx);
    const archive = await archiveResult(result);
    if (archive) return archive;
  } catch (error) {
    return errorResult(op, error, args);
  }
  const structured = result as Record<string, unknown>;
  return { content: [{ type: 'text', text: summarize(op, structured) }], structuredContent: structured };
}

/** A fresh MCP server whose tools act in `ctx` (its tenant, and its space when confined). */
export function createLedgerMcpServer(ctx: Context, registry: readonly AnyOperation[] = operations): McpServer {
  const server = new McpServer(
    { name: SERVICE_NAME, version: SERVICE_VERSION },
    {
      instructions:
        INSTRUCTIONS + (ctx.confinedSpace !== undefined ? ` This connection is confined to the space "${ctx.confinedSpace}".` : ''),
    },
  );
  const confined = ctx.confinedSpace !== undefined;
  for (const op of registry) {
    server.registerTool(
      op.name,
      {
        title: op.title,
        description: describe(op, ctx.confinedSpace),
        inputSchema: passThrough(advertisedSchema(op, confined)),
        annotations: annotationsOf(op),
      },
      (args) => callOperation(op, args, ctx),
    );
  }
  return server;
}
