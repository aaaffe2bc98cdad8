// A plain 2025-era `tools/call` told apart without the SDK's classifier, for the MCP door (./handler.ts) and
// the HTTP threads (server/fronts/), which do not load the SDK: the protocol versions it knows reach them
// from the ledger thread as a LegacyEra.

/** The SDK's supported protocol versions and the `_meta` key of a per-request (modern) version. */
export interface LegacyEra {
  readonly versions: readonly string[];
  readonly versionMetaKey: string;
}

export const rpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });

/** A body over SVC_MAX_BODY_BYTES, refused in the protocol (here and by the HTTP threads, server/fronts/). */
export const payloadTooLarge = (maxBodyBytes: number): Response =>
  rpcError(413, -32000, `Payload Too Large: the body must not exceed ${maxBodyBytes} bytes`);

/**
 * The common case decided without the SDK's classifier (a zod pass that costs ~0.3 ms a call): one
 * request or notification with no per-request protocol envelope and no modern version header is 2025-era.
 * Anything else (batches, responses, envelopes, modern headers) is left to `isLegacyRequest`.
 */
export function plainLegacy(request: Request, body: unknown, era: LegacyEra): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { method, params } = body as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (typeof method !== 'string') return false;
  if (params?._meta && era.versionMetaKey in params._meta) return false;
  const header = request.headers.get('mcp-protocol-version')?.trim();
  return header === undefined || era.versions.includes(header);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A single JSON-RPC `tools/call` request the fast path may answer: the SDK would accept it and do nothing more. */
export function plainToolCall(
  request: Request,
  body: unknown,
): { id: string | number; name: string; args: Record<string, unknown> } | null {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const { id, params } = body;
  if ((typeof id !== 'string' && typeof id !== 'number') || !isPlainObject(params) || typeof params.name !== 'string') return null;
  const args = params.arguments ?? {};
  // Task-augmented calls and anything the SDK would refuse (406 without both media types) stay with the SDK.
  if (!isPlainObject(args) || 'task' in params || Object.keys(body).length !== 4) return null;
  const accept = request.headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  return { id, name: params.name, args };
}

/**
 * A JSON content type in the forms clients send; the SDK's `isJsonContentType` takes more (any case,
 * spaces, other parameters). The HTTP threads answer these and pass anything else to the door, which
 * decides with the SDK.
 */
export function plainJsonType(header: string | null): boolean {
  return header === 'application/json' || header?.startsWith('application/json;') === true;
}
