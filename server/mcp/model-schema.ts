// The input schemas a model reads on every turn, made small and portable from the operation's JSON Schema
// (tools/json-schema.ts, which the OpenAPI document shows whole). Validation stays with the operation's
// zod schema, so what is left out here is still enforced and still refused with a message naming the
// field; what is dropped is only what a model does not need to call the tool well:
// - fields that must never be sent (captured_at, tenant): a model that is not offered them does not
//   send them, and the server still refuses or ignores them as before;
// - a `null` branch (sending null and leaving the field out mean the same on every optional input);
// - size caps and defaults the description already states (maxLength, maxItems, minLength, default) and
//   `$schema` (2020-12 is MCP's default dialect);
// - the string spellings "true"/"false" of a flag (a REST query string needs them; a tool call sends a boolean);
// - the branches of a read instant (a date-time, a date, or "now"): one string, its description says which;
// - the long prose of the read instants.
// Every schema left declares a type (the Inspector's strict mode warns on an untyped one, a bare `true`,
// a `type` array or a remote `$ref`); test/mcp-tool-list.test.ts holds the listing to those rules.
import type { JsonSchema } from '../../tools/json-schema.ts';

/** Never sent by a client: the server stamps captured_at and takes the tenant from the key. */
export const HIDDEN_FIELDS: ReadonlySet<string> = new Set(['captured_at', 'tenant']);

const DROPPED_KEYWORDS = new Set(['$schema', 'maxLength', 'maxItems', 'minLength', 'propertyNames', 'default']);

/** Shorter words for the fields every read carries. */
const SHORT_DESCRIPTIONS: Readonly<Record<string, string>> = {
  as_of: 'Knowledge instant: "now", or an earlier ISO 8601 instant or date to replay what was known then.',
  valid_at: 'Content instant ("now" or ISO 8601): only rows whose validity contains it.',
  rules_as_of: 'Apply the declaration in force at this instant (ISO 8601 or a date) instead of at as_of.',
  edge_type: 'Edge type (case-insensitive).',
};

/** Any JSON value, spelled with typed branches. */
const ANY_JSON: JsonSchema[] = ['string', 'number', 'boolean', 'object', 'array'].map((type) => ({ type }));

const isObject = (v: unknown): v is JsonSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

const isString = (b: unknown): boolean => isObject(b) && b.type === 'string';

/** A flag's `true`/`false` strings and a read instant's branches fold into one typed schema. */
function folded(schema: JsonSchema): JsonSchema {
  if (!Array.isArray(schema.anyOf)) return schema;
  const branches = schema.anyOf as unknown[];
  const { anyOf: _dropped, ...rest } = schema;
  if (
    branches.some((b) => isObject(b) && b.type === 'boolean') &&
    branches.every((b) => isObject(b) && (b.type === 'boolean' || Array.isArray(b.enum)))
  )
    return { ...rest, type: 'boolean' };
  if (branches.length > 1 && branches.every(isString) && branches.some((b) => (b as JsonSchema).format === 'date-time'))
    return { ...rest, type: 'string' };
  return schema;
}

function withoutNull(schema: JsonSchema): JsonSchema {
  if (!Array.isArray(schema.anyOf)) return schema;
  const branches = (schema.anyOf as unknown[]).filter((b) => !(isObject(b) && b.type === 'null'));
  if (branches.length === schema.anyOf.length) return schema;
  const { anyOf: _dropped, ...rest } = schema;
  return branches.length === 1 && isObject(branches[0]) ? { ...branches[0], ...rest } : { ...rest, anyOf: branches };
}

const typed = (s: JsonSchema): boolean => ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', '$ref', 'properties'].some((k) => k in s);

function compact(node: unknown, name: string | undefined, inBranch: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, undefined, false));
  if (!isObject(node)) return node;
  const schema = folded(withoutNull(node));
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYWORDS.has(key)) continue;
    if (key === 'description') {
      if (!inBranch) out.description = (name && SHORT_DESCRIPTIONS[name]) ?? value;
    } else if (key === 'properties' && isObject(value)) {
      const props: JsonSchema = {};
      for (const [field, sub] of Object.entries(value)) if (!HIDDEN_FIELDS.has(field)) props[field] = compact(sub, field, false);
      out.properties = props;
    } else if (key === 'required' && Array.isArray(value)) {
      out.required = value.filter((f) => !HIDDEN_FIELDS.has(String(f)));
    } else if (key === 'additionalProperties' && isObject(value) && Object.keys(value).length === 0) {
      out.additionalProperties = true;
    } else if (key === 'anyOf' || key === 'oneOf') {
      out[key] = (value as unknown[]).map((b) => compact(b, undefined, true));
    } else out[key] = compact(value, undefined, false);
  }
  if (!typed(out)) out.anyOf = ANY_JSON;
  return out;
}

/** The model-facing copy of an input schema. */
export function modelSchema(json: JsonSchema): JsonSchema {
  return compact(json, undefined, false) as JsonSchema;
}
