// The OpenAPI 3.1 document of the REST door, generated (never written by hand) from what the door runs:
// the route table, each operation's input schema mapped onto path, query and body exactly as the door
// maps it, the output schemas both doors advertise, and the error bodies tools/error-body.ts builds. A
// route or operation added later appears here without a line changed.
import { z } from 'zod';
import {
  DEFAULT_LIMIT,
  DeleteResultSchema,
  DigestSchema,
  ExportPageSchema,
  ImportBodySchema,
  ImportConflictBodySchema,
  ImportResultSchema,
  MAX_LIMIT,
  PlacementStatusSchema,
} from '../server/admin-schemas.ts';
import { UNAUTHORIZED_WHY } from '../tools/error-body.ts';
import { ErrorBodySchema, ValidationErrorBodySchema } from '../tools/error-schemas.ts';
import { operationNamed } from '../tools/index.ts';
import { inputJsonSchema, operationOutputJsonSchema, outputJsonSchema, type JsonSchema } from '../tools/json-schema.ts';
import { pathFields, type AnyOperation, type RestBinding } from '../tools/operation.ts';
import { CheckInstallOutputSchema, VersionOutputSchema } from '../tools/output-schemas.ts';
import { routes, type RestRoute } from './routes.ts';

export const OPENAPI_PATH = '/v1/openapi.json';

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

type Operation = Record<string, unknown>;
type PathItem = Partial<Record<'get' | 'post' | 'delete', Operation>>;

const ref = (kind: 'schemas' | 'responses', name: string): JsonSchema => ({ $ref: `#/components/${kind}/${name}` });

/** The media type of each file answer an operation's `rest.answer` can name. */
const FILE_MEDIA: Readonly<Record<NonNullable<RestBinding['answer']>, string>> = { archive: 'application/gzip' };

/** Errors each operation can answer besides 401 and validation, by name (what its handler may throw). */
const EXTRA_ERRORS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  search_memory: { '503': 'Unavailable' },
  invalidate_memory: { '404': 'NotFound' },
};

const BAD_REQUEST =
  'SVC_BAD_TIMESTAMP: a query-parameter instant that does not parse (the detail also has loc); invalid_json: a body that is not JSON.';

function errorResponse(description: string): JsonSchema {
  return { description, content: { 'application/json': { schema: ref('schemas', 'ErrorBody') } } };
}

/** An error answer a client should retry after the seconds in Retry-After (also `retry_after` in the body). */
function retryable(description: string): JsonSchema {
  return {
    ...errorResponse(description),
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } } },
  };
}

function components(): JsonSchema {
  const schema = (s: z.ZodType): JsonSchema => withoutSchemaKey(outputJsonSchema(s));
  return {
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key: it selects the tenant. Required on a hosted deployment (SVC_API_KEYS); an open local server needs none.',
      },
      operator: {
        type: 'http',
        scheme: 'bearer',
        description:
          'Operator only: the key in SVC_OPERATOR_KEY, for the /admin routes and nothing else; a tenant key there is refused (403). ' +
          'Without SVC_OPERATOR_KEY the /admin routes do not exist (404).',
      },
    },
    schemas: { ErrorBody: schema(ErrorBodySchema), ValidationErrorBody: schema(ValidationErrorBodySchema) },
    responses: {
      BadRequest: errorResponse(BAD_REQUEST),
      AsOfRequiredOrBadRequest: errorResponse(`SVC_AS_OF_REQUIRED: a read without as_of (checked before anything else). ${BAD_REQUEST}`),
      Unauthorized: {
        ...errorResponse(`SVC_UNAUTHORIZED: ${UNAUTHORIZED_WHY}.`),
        headers: { 'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string', const: 'Bearer' } } },
      },
      NotFound: errorResponse('not_found: no such route, or no block visible now with this id.'),
      PayloadTooLarge: errorResponse('payload_too_large: a body over SVC_MAX_BODY_BYTES.'),
      ValidationError: {
        description: 'The input failed validation: one item per failed field, loc naming it from its source on.',
        content: { 'application/json': { schema: ref('schemas', 'ValidationErrorBody') } },
      },
      Unavailable: errorResponse('unavailable: an engine this operation needs is not running.'),
      Overloaded: retryable('overloaded: the server is at its limit of requests in flight (SVC_MAX_REQUESTS).'),
      UnavailableOrOverloaded: retryable(
        'unavailable: an engine this operation needs is not running; overloaded (with Retry-After): the server is busy, ' +
          'the queue for expensive operations is full (SVC_HEAVY_QUEUE) or the wait would outlast the deadline.',
      ),
      OverShare: retryable('over_share: this key already holds its share of the queue for expensive operations (SVC_HEAVY_QUEUE_PER_KEY).'),
      DeadlineExceeded: retryable(
        'deadline_exceeded: the request ran past SVC_REQUEST_TIMEOUT_MS and was cancelled; nothing was written by it.',
      ),
    },
  };
}

/** Shared row types (NodeRow, Certificate, ...), hoisted out of each answer into components.schemas. */
const shared: Record<string, JsonSchema> = {};

function toComponentRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toComponentRefs);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    out[key] = key === '$ref' && typeof value === 'string' ? value.replace('#/$defs/', '#/components/schemas/') : toComponentRefs(value);
  }
  return out;
}

/** A JSON Schema ready to embed: no $schema, its named $defs moved to components.schemas. */
function withoutSchemaKey(json: JsonSchema): JsonSchema {
  const { $schema: _ignored, $defs, ...rest } = json;
  for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
    shared[name] = toComponentRefs(def) as JsonSchema;
  }
  return toComponentRefs(rest) as JsonSchema;
}

/** A property schema without its description (which moves onto the parameter). */
function parameterOf(name: string, where: 'path' | 'query', schema: JsonSchema, required: boolean): Parameter {
  const { description, ...rest } = schema;
  const p: Parameter = { name, in: where, required, schema: rest };
  if (typeof description === 'string') p.description = description;
  return p;
}

function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

function routeOperation(route: RestRoute, op: AnyOperation): Operation {
  const input = withoutSchemaKey(inputJsonSchema(op));
  const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(input.required) ? (input.required as string[]) : []);
  const pathNames = pathFields(op.rest);
  const parameters: Parameter[] = pathNames.map((name) => parameterOf(name, 'path', properties[name] ?? { type: 'string' }, true));
  const out: Operation = {
    operationId: op.name,
    summary: op.title,
    description: op.description,
    // resolve_fact answers as of an instant and records its verdict: listed under both.
    tags: op.effect.readOnly ? ['reads'] : op.requiresAsOf ? ['reads', 'writes'] : ['writes'],
  };

  const rest: Record<string, JsonSchema> = Object.fromEntries(Object.entries(properties).filter(([name]) => !pathNames.includes(name)));
  if (route.from === 'query') {
    for (const [name, schema] of Object.entries(rest)) parameters.push(parameterOf(name, 'query', schema, required.has(name)));
  } else {
    const body: JsonSchema = { ...input, properties: rest };
    const bodyRequired = [...required].filter((n) => !pathNames.includes(n));
    if (bodyRequired.length) body.required = bodyRequired;
    else delete body.required;
    out.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  }
  if (parameters.length) out.parameters = parameters;

  const media = op.rest.answer ? FILE_MEDIA[op.rest.answer] : undefined;
  const json = operationOutputJsonSchema(op);
  const ok: JsonSchema = media
    ? {
        description: 'The bundle, streamed as it is packed.',
        headers: {
          'Content-Disposition': {
            description: 'attachment; filename="ledger-<tenant>[-<space>]-<as_of>.tar.gz"',
            schema: { type: 'string' },
          },
        },
        content: { [media]: { schema: { type: 'string', contentMediaType: media } } },
      }
    : { description: 'The answer.', content: { 'application/json': { schema: json ? withoutSchemaKey(json) : {} } } };

  const responses: Record<string, JsonSchema> = { '200': ok };
  responses['400'] = ref('responses', op.requiresAsOf ? 'AsOfRequiredOrBadRequest' : 'BadRequest');
  responses['401'] = ref('responses', 'Unauthorized');
  for (const [status, name] of Object.entries(EXTRA_ERRORS[op.name] ?? {})) responses[status] = ref('responses', name);
  if (route.from === 'body') responses['413'] = ref('responses', 'PayloadTooLarge');
  responses['422'] = ref('responses', 'ValidationError');
  // Admission control (tools/admission.ts): any request can meet the ceiling on requests in flight;
  // the operations that can be expensive also queue, with a share per key and a deadline.
  if (op.heavy !== undefined) responses['429'] = ref('responses', 'OverShare');
  responses['503'] = ref('responses', responses['503'] ? 'UnavailableOrOverloaded' : 'Overloaded');
  responses['504'] = ref('responses', 'DeadlineExceeded');
  out.responses = responses;
  return out;
}

function jsonAnswer(description: string, schema: z.ZodType): JsonSchema {
  return { description, content: { 'application/json': { schema: withoutSchemaKey(outputJsonSchema(schema)) } } };
}

/** Routes the app serves itself, beside the route table (bridge/rest.ts, server/app.ts). */
function serviceRoutes(): Record<string, PathItem> {
  return {
    '/v1/version': {
      get: {
        operationId: 'version',
        summary: 'Service version',
        description: 'Open: no key needed.',
        tags: ['service'],
        security: [],
        responses: { '200': jsonAnswer('Name, version, API and bundle format.', VersionOutputSchema) },
      },
    },
    [OPENAPI_PATH]: {
      get: {
        operationId: 'openapi',
        summary: 'This document',
        description: 'Open: no key needed. Generated from the schemas both doors use.',
        tags: ['service'],
        security: [],
        responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
    '/v1/check_install': {
      get: {
        operationId: 'check_install',
        summary: 'Installation checks',
        description: 'Data folder, graph store, vector index, embedder, extractor and auth mode.',
        tags: ['service'],
        responses: { '200': jsonAnswer('One entry per check.', CheckInstallOutputSchema), '401': ref('responses', 'Unauthorized') },
      },
    },
    '/v1/memories/{id}': {
      delete: {
        operationId: 'delete_memory',
        summary: 'Always refused',
        tags: ['writes'],
        description:
          'The ledger is append-only: nothing is ever deleted. Write a new block with a SUPERSEDES edge, or invalidate the block.',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '401': ref('responses', 'Unauthorized'), '501': errorResponse('append_only: always.') },
      },
    },
  };
}

/** A query parameter of an /admin route: a whole number (checked as server/admin.ts checks it). */
function wholeNumber(name: string, description: string, min: number, max: number, fallback?: number): Parameter {
  const schema: JsonSchema = { type: 'integer', minimum: min, maximum: max };
  if (fallback !== undefined) schema.default = fallback;
  return { name, in: 'query', required: false, description, schema };
}

/**
 * The operator routes (server/admin.ts, the placement route in server/app.ts), described from the schemas
 * they run with. Operator only: each takes the operator scheme alone, never a tenant key.
 */
function adminRoutes(): Record<string, PathItem> {
  const tenant: Parameter = {
    name: 'tenant',
    in: 'path',
    required: true,
    description: 'The tenant, as the key map names it.',
    schema: { type: 'string' },
  };
  const after = wholeNumber('after', 'Rows with a tseq above this one (0: from the first).', 0, Number.MAX_SAFE_INTEGER, 0);
  const guarded = (description: string, extra: Record<string, JsonSchema>, ok: JsonSchema): Operation => ({
    description: `Operator only (SVC_OPERATOR_KEY). ${description}`,
    tags: ['operator'],
    security: [{ operator: [] }],
    'x-operator-only': true,
    responses: {
      '200': ok,
      '401': errorResponse('SVC_UNAUTHORIZED: no key, or not the operator key.'),
      '403': errorResponse('forbidden: a tenant key; the /admin routes take the operator key only.'),
      '404': errorResponse('not_found: SVC_OPERATOR_KEY is not set on this server, so the /admin routes do not exist.'),
      ...extra,
    },
  });
  const invalid = errorResponse('invalid_input: a query parameter or a body field is malformed; detail.loc names it.');
  const dropping = errorResponse('conflict: the tenant\u2019s rows here are being deleted (DELETE /admin/tenants/{tenant}).');
  return {
    '/admin/tenants/{tenant}/rows': {
      get: {
        operationId: 'admin_export_rows',
        summary: 'Export a page of a tenant’s rows (operator only)',
        parameters: [
          tenant,
          after,
          wholeNumber('limit', 'Rows a page holds at most (up to two more keep rows of one tseq together).', 1, MAX_LIMIT, DEFAULT_LIMIT),
        ],
        ...guarded(
          'Rows verbatim, in tseq order, every table interleaved; page with next_after.',
          { '409': dropping, '422': invalid },
          jsonAnswer('A page.', ExportPageSchema),
        ),
      },
      post: {
        operationId: 'admin_import_rows',
        summary: 'Import rows of a tenant verbatim (operator only)',
        parameters: [tenant],
        requestBody: { required: true, content: { 'application/json': { schema: withoutSchemaKey(inputSchema(ImportBodySchema)) } } },
        ...guarded(
          'Stores rows as another server exported them, durable before the answer; rows already held and equal are skipped.',
          {
            '400': errorResponse('invalid_json: the body is not JSON.'),
            '409': jsonAnswer(
              'A differing row, a gap or a space held by another tenant; nothing of the call stored. (While the tenant\u2019s rows here ' +
                'are being deleted, a 409 whose detail has error and why only.)',
              ImportConflictBodySchema,
            ),
            '413': ref('responses', 'PayloadTooLarge'),
            '422': invalid,
          },
          jsonAnswer('What was stored.', ImportResultSchema),
        ),
      },
    },
    '/admin/tenants/{tenant}/digest': {
      get: {
        operationId: 'admin_digest',
        summary: 'Digest of a tenant’s rows (operator only)',
        parameters: [tenant, after, wholeNumber('up_to', 'Rows with a tseq up to this one (absent: all).', 0, Number.MAX_SAFE_INTEGER)],
        ...guarded('Compares two copies of a range of rows.', { '409': dropping, '422': invalid }, jsonAnswer('The digest.', DigestSchema)),
      },
    },
    '/admin/tenants/{tenant}': {
      delete: {
        operationId: 'admin_delete_tenant',
        summary: 'Delete a copy of a tenant (operator only)',
        parameters: [
          tenant,
          {
            name: 'force',
            in: 'query',
            required: false,
            description: 'true: delete although this server has no placement (SVC_ETCD unset) and so serves every tenant.',
            schema: { type: 'string', enum: ['true', 'false'] },
          },
          {
            name: 'wait_ms',
            in: 'query',
            required: false,
            description:
              'How long to wait for the deletion before answering 202 while it goes on in the background (0 to 60000, default 5000).',
            schema: { type: 'integer', minimum: 0, maximum: 60000 },
          },
        ],
        ...guarded(
          'Only a copy on a server the tenant is placed away from (a partial copy, or the source after a move). The rows go in ' +
            'parts of SVC_DROP_PART_ROWS, one transaction each, with other tenants\u2019 commits in between; the tenant is refused here ' +
            'from the first part on, and a deletion cut short by a restart goes on when the server opens its data folder. A DELETE while ' +
            'one runs joins it.',
          {
            '202': jsonAnswer('Not finished within wait_ms: it goes on; DELETE again to follow it (Retry-After: 1).', DeleteResultSchema),
            '409': errorResponse('conflict: this server serves the tenant (or has no placement and force is not true).'),
            '422': invalid,
          },
          jsonAnswer('No row of the tenant is left here.', DeleteResultSchema),
        ),
      },
    },
    '/admin/tenants/{tenant}/placement': {
      get: {
        operationId: 'admin_placement',
        summary: 'This server’s view of a tenant’s placement (operator only)',
        parameters: [tenant],
        ...guarded(
          'Only on a server with placement (SVC_ETCD); else 404.',
          { '503': errorResponse('unavailable: the placement record in etcd is invalid.') },
          jsonAnswer('The placement as this server sees it.', PlacementStatusSchema),
        ),
      },
    },
  };
}

/** A zod input schema as JSON Schema (what a body may hold). */
function inputSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
}

let cached: JsonSchema | undefined;

/** The document; built once per process (the schemas and routes do not change while it runs). */
export function openApiDocument(version: string): JsonSchema {
  if (cached) return cached;
  const paths: Record<string, PathItem> = { ...serviceRoutes(), ...adminRoutes() };
  for (const route of routes) {
    const item = (paths[openApiPath(route.path)] ??= {});
    item[route.method === 'GET' ? 'get' : 'post'] = routeOperation(route, operationNamed(route.operation));
  }
  const parts = components();
  Object.assign(parts.schemas as JsonSchema, shared);
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'memory-ledger REST API',
      version,
      description:
        'A time-aware, append-only memory ledger. Every read names as_of (the knowledge instant); ' +
        'the same operations are MCP tools at /mcp. Errors: every 4xx and 5xx body is {detail: ...}; see docs/rest.md, "Errors".',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, {}],
    tags: [
      { name: 'writes', description: 'Append rows, declarations and invalidations; nothing is changed or deleted.' },
      { name: 'reads', description: 'Answers as known at as_of, with a certificate.' },
      { name: 'service', description: 'Version, checks and this document.' },
      {
        name: 'operator',
        description:
          'Operator only, never for applications: exact tenant copies between servers and placement (docs/cluster.md). ' +
          'The operator security scheme (SVC_OPERATOR_KEY) only.',
      },
    ],
    paths,
    components: parts,
  };
  return cached;
}
