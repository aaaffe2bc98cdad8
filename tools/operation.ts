// An operation is one file in tools/: a name, a description written for an agent, a zod input schema
// and a handler. Both doors call `runOperation`, so as_of, confinement and validation are decided once.
import { z } from 'zod';
import type { Context } from './context.ts';
import { invalidInput, SvcError, type FieldIssue } from './errors.ts';

export interface Operation<Input extends z.ZodObject = z.ZodObject, Output = unknown> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: Input;
  /** Reads name a knowledge instant; without one they answer 400 SVC_AS_OF_REQUIRED before any validation. */
  readonly requiresAsOf: boolean;
  /** The operation takes a `space` argument that an app-scoped address fixes. */
  readonly confinable: boolean;
  handler(input: z.infer<Input>, ctx: Context): Promise<Output>;
}

export function defineOperation<Input extends z.ZodObject, Output>(op: Operation<Input, Output>): Operation<Input, Output> {
  return op;
}

export type AnyOperation = Operation<z.ZodObject, unknown>;

/**
 * zod's issues in the standard validation shape. An unknown key becomes one `extra_forbidden` issue per
 * key with `loc` naming the key itself, so a client sees exactly which field to drop or rename.
 */
export function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((i): FieldIssue[] => {
    const path = i.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    if (i.code === 'unrecognized_keys') {
      return i.keys.map((key) => ({
        type: 'extra_forbidden',
        loc: [...path, key],
        msg: `unknown field "${key}": it is not part of this request (check its spelling)`,
        input: null,
      }));
    }
    const issue: FieldIssue = {
      type: i.code === 'custom' && (i as { params?: { svc?: string } }).params?.svc ? 'timestamp' : i.code,
      loc: path,
      msg: i.message,
    };
    if ('input' in i && i.input !== undefined && typeof i.input !== 'object') issue.input = truncate(i.input);
    return [issue];
  });
}

function truncate(v: unknown): unknown {
  return typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…` : v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export async function runOperation(op: AnyOperation, raw: unknown, ctx: Context): Promise<unknown> {
  // Confinement is applied here, once, for both doors: an operation that cannot be held to one space
  // (declare_fact sets rules for the whole tenant) would let an app-scoped address, possibly opened
  // without a key, act beyond its space; one that can is given the address's space.
  if (ctx.confinedSpace !== undefined && !op.confinable) {
    throw new SvcError(
      'SVC_UNAUTHORIZED',
      `${op.name} acts on the whole tenant and is not available at an address confined to the space "${ctx.confinedSpace}"; use /mcp or the /v1 route with the key`,
    );
  }
  const input: Record<string, unknown> = isRecord(raw) ? { ...raw } : {};
  if (op.requiresAsOf && (input.as_of === undefined || input.as_of === null || input.as_of === '')) {
    throw new SvcError(
      'SVC_AS_OF_REQUIRED',
      'every read names a knowledge instant: pass as_of (an ISO 8601 instant with offset, or a date)',
    );
  }
  if (!isRecord(raw)) throw invalidInput([{ type: 'object', loc: [], msg: 'expected a JSON object' }]);
  // `tenant` is never read from input; an app-scoped address fixes `space`.
  delete input.tenant;
  if (op.confinable && ctx.confinedSpace !== undefined) input.space = ctx.confinedSpace;
  const parsed = op.input.safeParse(input);
  if (!parsed.success) throw invalidInput(issuesOf(parsed.error));
  // The caller's tenant stays resident while the operation runs: its snapshot and its writes' plans read
  // that read model, which must not be evicted under them.
  const release = ctx.ledger.pin(ctx.tenant);
  try {
    await ctx.ledger.load(ctx.tenant);
    return await op.handler(parsed.data, ctx);
  } finally {
    release();
  }
}
