// An operation is one file in tools/: a name, a description written for an agent, a zod input schema
// and a handler. Both doors call `runOperation`, so as_of, confinement and validation are decided once.
import { z } from 'zod';
import type { Context } from './context.ts';
import { deadlineCutsWork, deadlineExceeded, isHeavy } from './admission.ts';
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
  const admission = ctx.services.admission;
  if (!admission) return runAdmitted(op, parsed.data, ctx);
  // The deadline covers the wait for a turn and the work; a client that goes away cancels the same way.
  const deadline = AbortSignal.timeout(admission.limits.requestTimeoutMs);
  const signal = ctx.signal ? AbortSignal.any([deadline, ctx.signal]) : deadline;
  const admitted = await admission.admit(ctx.tenant, isHeavy(op.name, input), signal);
  const work = runAdmitted(op, parsed.data, { ...ctx, signal }).finally(() => admitted.release());
  // A read is answered at its deadline; its slot stays taken until the work notices the signal and stops,
  // so an abandoned read never lets more work in than the limits allow. Writes and exports run to the end.
  if (!deadlineCutsWork(op.name, op.requiresAsOf)) return work;
  return raceDeadline(work, signal);
}

async function runAdmitted(op: AnyOperation, input: Record<string, unknown>, ctx: Context): Promise<unknown> {
  // The caller's tenant stays resident while the operation runs: its snapshot and its writes' plans read
  // that read model, which must not be evicted under them.
  const release = ctx.ledger.pin(ctx.tenant);
  try {
    await ctx.ledger.load(ctx.tenant);
    return await op.handler(input, ctx);
  } catch (error) {
    // A handler that stopped at its deadline (throwIfAborted) answers as a deadline, never as a failure of ours.
    if (ctx.signal?.aborted && !(error instanceof SvcError)) throw deadlineExceeded('while it ran');
    throw error;
  } finally {
    release();
  }
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
