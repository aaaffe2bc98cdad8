// An operation is one file in tools/: a name, a description written for an agent, a zod input schema
// and a handler. Both doors call `runOperation`, so as_of, confinement and validation are decided once.
import { z } from 'zod';
import type { Context } from './context.ts';
import { deadlineExceeded, type Admitted, type Lane } from './admission.ts';
import { invalidInput, SvcError, type FieldIssue } from './errors.ts';
import { unknownFieldIssue } from './unknown-field.ts';
import { TenantDropping } from '../storage/log/tenant-drops.ts';

export interface RestBinding {
  readonly method: 'GET' | 'POST';
  /** Segments; `:name` takes one percent-decoded path segment (ids may hold `/` as %2F). */
  readonly path: string;
  /** Where the fields other than path segments travel. */
  readonly from: 'query' | 'body';
  /** A result the bridge answers as something other than JSON; `archive` is a .tar.gz download. */
  readonly answer?: 'archive';
}

export interface Effect {
  readonly readOnly: boolean;
  /** It can hide or take back something a client may want kept; only said of writes. */
  readonly destructive?: boolean;
  /** Repeating the same call changes nothing more; only said of writes. */
  readonly idempotent?: boolean;
}

/** The fields of an operation taken from path segments, e.g. `id` of `/v1/memories/:id`. */
export function pathFields(rest: RestBinding): string[] {
  return rest.path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
}

export interface Operation<Input extends z.ZodObject = z.ZodObject, Output = unknown> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: Input;
  /** The JSON it answers (the MCP structuredContent and the REST 200 body); absent when `rest.answer` names a file. */
  readonly output?: z.ZodObject;
  /** Reads name a knowledge instant; without one they answer 400 SVC_AS_OF_REQUIRED before any validation. */
  readonly requiresAsOf: boolean;
  /** The operation takes a `space` argument that an app-scoped address fixes. */
  readonly confinable: boolean;
  /** Its REST route; the bridge builds its route table and the OpenAPI document from these. */
  readonly rest: RestBinding;
  /** What it does to the ledger; the MCP door turns it into the tool's annotations. */
  readonly effect: Effect;
  /** When it takes one of the SVC_MAX_HEAVY slots (tools/admission.ts); absent: never, it only counts as in flight. */
  readonly heavy?: Heavy;
  /** When not heavy it still takes one of the SVC_MAX_SEARCHES slots (a search: tools/admission.ts). */
  readonly searchSlot?: true;
  /**
   * A read is answered 504 at its deadline while its work still runs, unless it says `finish`: an export,
   * whose size the caller chose and which is streamed as it is packed. Writes always finish (an early
   * "timed out" for a write that then commits would be false); both are bounded by the queue only.
   */
  readonly deadline?: 'answer' | 'finish';
  handler(input: z.infer<Input>, ctx: Context): Promise<Output>;
}

/** What a heavy test may ask of the server without waiting: whether a search of a space is as cheap as a list now. */
export interface Resident {
  searchIsLight(space: string): boolean;
}

/** Nothing resident: every test answers as for a cold server (tests of the input alone, the early refusal). */
export const NOTHING_RESIDENT: Resident = { searchIsLight: () => false };

/** `always`, or a test of the raw input (and what is resident) with the words the start-up line says it in. */
export type Heavy = 'always' | { readonly when: string; readonly test: (input: Record<string, unknown>, resident: Resident) => boolean };

/** Whether this request takes a heavy slot. */
export function isHeavy(op: Pick<AnyOperation, 'heavy'>, input: Record<string, unknown>, resident = NOTHING_RESIDENT): boolean {
  return op.heavy === 'always' || (op.heavy?.test(input, resident) ?? false);
}

/** The lane this request is admitted by (tools/admission.ts). */
export function laneOf(op: Pick<AnyOperation, 'heavy' | 'searchSlot'>, input: Record<string, unknown>, resident = NOTHING_RESIDENT): Lane {
  return isHeavy(op, input, resident) ? 'heavy' : op.searchSlot ? 'search' : 'light';
}

/** Whether this request is answered at its deadline while its work still runs (then stops at its next check). */
export function deadlineCutsWork(op: Pick<AnyOperation, 'requiresAsOf' | 'deadline'>): boolean {
  return op.requiresAsOf && op.deadline !== 'finish';
}

/** How the start-up line names an operation that can be heavy. */
export function heavyName(op: Pick<AnyOperation, 'name' | 'heavy'>): string {
  return op.heavy === undefined || op.heavy === 'always' ? op.name : `${op.name} ${op.heavy.when}`;
}

export function defineOperation<Input extends z.ZodObject, Output>(op: Operation<Input, Output>): Operation<Input, Output> {
  return op;
}

export type AnyOperation = Operation<z.ZodObject, unknown>;

/** The field names a schema takes at `path` (top level and objects inside arrays), for suggestions. */
function knownAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: z.ZodType | undefined = schema;
  for (const step of path) {
    while (at && !(at instanceof z.ZodObject) && !(at instanceof z.ZodArray) && 'innerType' in at._zod.def) {
      at = (at._zod.def as { innerType: z.ZodType }).innerType;
    }
    if (at instanceof z.ZodArray && typeof step === 'number') at = at.element as z.ZodType;
    else if (at instanceof z.ZodObject && typeof step === 'string') at = at.shape[step] as z.ZodType | undefined;
    else return [];
  }
  while (at && !(at instanceof z.ZodObject) && 'innerType' in at._zod.def) at = (at._zod.def as { innerType: z.ZodType }).innerType;
  return at instanceof z.ZodObject ? Object.keys(at.shape) : [];
}

/**
 * zod's issues in the standard validation shape. An unknown key becomes one `extra_forbidden` issue per
 * key with `loc` naming the key itself, so a client sees exactly which field to drop or rename.
 */
export function issuesOf(error: z.ZodError, schema?: z.ZodType): FieldIssue[] {
  return error.issues.flatMap((i): FieldIssue[] => {
    const path = i.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    if (i.code === 'unrecognized_keys') {
      const known = schema ? knownAt(schema, i.path) : [];
      return i.keys.map((key) => unknownFieldIssue(key, path, known));
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
      'every read names a knowledge instant: pass as_of=now for what is known now, or an instant with offset ' +
        '(2024-03-01T12:00:00Z) or a date (2024-03-01) to replay what was known then',
    );
  }
  if (!isRecord(raw)) throw invalidInput([{ type: 'object', loc: [], msg: 'expected a JSON object' }]);
  // `tenant` is never read from input; an app-scoped address fixes `space`.
  delete input.tenant;
  if (op.confinable && ctx.confinedSpace !== undefined) input.space = ctx.confinedSpace;
  const parsed = op.input.safeParse(input);
  if (!parsed.success) throw invalidInput(issuesOf(parsed.error, op.input));
  const admission = ctx.services.admission;
  if (!admission) return runAdmitted(op, parsed.data, ctx);
  // The deadline covers the wait for a turn and the work; a client that goes away cancels the same way.
  const deadline = deadlineSignal(admission.limits.requestTimeoutMs, ctx.signal);
  const signal = deadline.signal;
  let admitted: Admitted;
  try {
    admitted = await admission.admit(ctx.tenant, laneOf(op, input, residentFor(ctx)), signal);
  } catch (error) {
    deadline.clear();
    throw error;
  }
  const work = runAdmitted(op, parsed.data, { ...ctx, signal }).finally(() => {
    admitted.release();
    deadline.clear();
  });
  // A read is answered at its deadline; its slot stays taken until the work notices the signal and stops,
  // so an abandoned read never lets more work in than the limits allow. Writes and exports run to the end.
  if (!deadlineCutsWork(op)) return work;
  return raceDeadline(work, signal);
}

/** Retry-After of a request for a tenant being deleted here. */
const DROPPING_RETRY_S = 5;

async function runAdmitted(op: AnyOperation, input: Record<string, unknown>, ctx: Context): Promise<unknown> {
  // Each operation loads the read model it answers from (a space's, or the tenant's for a read without
  // a space, a write or an export) and holds it while it uses it: nothing is loaded here.
  try {
    return await op.handler(input, ctx);
  } catch (error) {
    // A handler that stopped at its deadline (throwIfAborted) answers as a deadline, never as a failure of ours.
    if (ctx.signal?.aborted && !(error instanceof SvcError)) throw deadlineExceeded('while it ran');
    // The tenant was placed away and its rows here are being deleted: a client retrying meets its new server.
    if (error instanceof TenantDropping) throw new SvcError('unavailable', error.message, [], DROPPING_RETRY_S);
    throw error;
  }
}

/**
 * Aborts at `ms` or when the client goes away, whichever comes first; `clear` once the work is over. Not
 * AbortSignal.timeout/any: their timer outlives the request and, firing 8 s later for every request
 * answered long before, built a DOMException each (0.9 s of main thread in a 60 s mixed load).
 */
function deadlineSignal(ms: number, client?: AbortSignal): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  if (client?.aborted) controller.abort(client.reason);
  const timer = setTimeout(() => controller.abort(new DOMException('the request deadline passed', 'TimeoutError')), ms);
  timer.unref();
  const onClient = (): void => controller.abort(client?.reason);
  client?.addEventListener('abort', onClient, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      client?.removeEventListener('abort', onClient);
    },
  };
}

function residentFor(ctx: Context): Resident {
  const index = ctx.services.search;
  return index
    ? { searchIsLight: (space) => index.searchIsLight(ctx.tenant, space, ctx.ledger.residentSpaceNodes(ctx.tenant, space)) }
    : NOTHING_RESIDENT;
}

function disposeLate(result: unknown): void {
  const dispose = isRecord(result) ? result.dispose : undefined;
  if (typeof dispose === 'function') void Promise.resolve(dispose.call(result)).catch(() => undefined);
}

function raceDeadline(work: Promise<unknown>, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(deadlineExceeded('before it could start'));
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      // Nobody will read a late answer; one that holds resources (an export's staged files) frees them.
      work.then(disposeLate, () => undefined);
      reject(deadlineExceeded('while it ran'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
