// The JSON Schemas clients read (MCP tool listings, the OpenAPI document), made from the operations' zod
// schemas in one place so both doors advertise the same thing. The zod inputs keep instants as plain
// strings (they are parsed by our own rules); here each instant field is declared for what it is
// (`format: date-time`, a date where a date is accepted, the literal "now" on reads) and `edge_type`
// lists its values. Fields are recognised by name, which the API fixes, not by how zod builds them.
import { z } from 'zod';
import { EDGE_TYPES } from '../storage/types.ts';
import type { AnyOperation } from './operation.ts';

export type JsonSchema = Record<string, unknown>;

type InstantKind = 'read' | 'read-date' | 'knowledge' | 'instant';

/** Instant fields by name: what each accepts besides an ISO 8601 instant with offset. */
const INSTANT_FIELDS: Readonly<Record<string, InstantKind>> = {
  as_of: 'read-date',
  valid_at: 'read',
  rules_as_of: 'knowledge',
  asserted_at: 'instant',
  valid_from: 'instant',
  valid_to: 'instant',
  observed_at: 'instant',
  declared_captured_at: 'instant',
};

const EDGE_TYPE_NOTE = ' Matched case-insensitively and stored upper-case.';

function branchesOf(kind: InstantKind): JsonSchema[] {
  const out: JsonSchema[] = [{ type: 'string', format: 'date-time' }];
  if (kind === 'read-date' || kind === 'knowledge')
    out.push({ type: 'string', format: 'date', description: 'A date: the end of that day in UTC.' });
  if (kind === 'read' || kind === 'read-date') out.push({ type: 'string', const: 'now', description: "The server's present instant." });
  return out;
}

function isNullable(schema: JsonSchema): boolean {
  if (Array.isArray(schema.type) && schema.type.includes('null')) return true;
  return Array.isArray(schema.anyOf) && schema.anyOf.some((b) => (b as JsonSchema).type === 'null');
}

function instantSchema(schema: JsonSchema, kind: InstantKind): JsonSchema {
  const branches = branchesOf(kind);
  if (isNullable(schema)) branches.push({ type: 'null' });
  const out: JsonSchema = {};
  if (typeof schema.description === 'string') out.description = schema.description;
  if (schema.default !== undefined) out.default = schema.default;
  return branches.length === 1 ? { ...out, ...branches[0] } : { ...out, anyOf: branches };
}

function edgeTypeSchema(schema: JsonSchema): JsonSchema {
  const description = typeof schema.description === 'string' ? schema.description : 'The edge type.';
  return {
    type: 'string',
    enum: [...EDGE_TYPES],
    description: description.includes('case-insensitively') ? description : description + EDGE_TYPE_NOTE,
  };
}

/** Declares instants and edge types wherever they appear in an input schema (nested rows included). */
export function decorateInput(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(decorateInput);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (key === 'properties' && value !== null && typeof value === 'object') {
      const props: JsonSchema = {};
      for (const [name, prop] of Object.entries(value as JsonSchema)) {
        const decorated = decorateInput(prop) as JsonSchema;
        const kind = INSTANT_FIELDS[name];
        props[name] = kind ? instantSchema(decorated, kind) : name === 'edge_type' ? edgeTypeSchema(decorated) : decorated;
      }
      out[key] = props;
    } else out[key] = decorateInput(value);
  }
  return out;
}

/** Output objects stay open: a minor version may add fields, and a client's validator should let it. */
function openObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (key === 'additionalProperties' && value === false) continue;
    out[key] = openObjects(value);
  }
  return out;
}

const inputCache = new Map<AnyOperation, JsonSchema>();

/** The operation's input as clients are told it (a fresh copy each call; callers may edit it). */
export function inputJsonSchema(op: AnyOperation): JsonSchema {
  let json = inputCache.get(op);
  if (!json) {
    json = decorateInput(z.toJSONSchema(op.input, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' })) as JsonSchema;
    inputCache.set(op, json);
  }
  return structuredClone(json);
}

/** A zod output schema as clients are told it. */
export function outputJsonSchema(schema: z.ZodType): JsonSchema {
  const json = openObjects(z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12', unrepresentable: 'any' })) as JsonSchema;
  // zod leaves the registry `id` inside each named $def; `id` is no JSON Schema 2020-12 keyword and
  // strict validators (the MCP client's) refuse it. The $defs key already names the type.
  const defs = json.$defs as Record<string, JsonSchema> | undefined;
  if (defs) for (const def of Object.values(defs)) delete def.id;
  return json;
}

const outputCache = new Map<z.ZodObject, JsonSchema>();

/** The JSON answer of an operation, or undefined when it answers a file. */
export function operationOutputJsonSchema(op: AnyOperation): JsonSchema | undefined {
  if (!op.output) return undefined;
  let json = outputCache.get(op.output);
  if (!json) {
    json = outputJsonSchema(op.output);
    outputCache.set(op.output, json);
  }
  return structuredClone(json);
}
