// The one way an operation opens a read: the lens fields of its input (already parsed by the schema)
// become a snapshot of the caller's tenant, with `now` resolved and commits in flight settled.
import type { LensInput, LensInstant } from '../storage/read/lens.ts';
import type { Snapshot } from '../storage/read/snapshot.ts';
import type { Context } from './context.ts';

export interface LensFields {
  as_of: LensInstant;
  valid_at?: LensInstant | undefined;
  space?: string | undefined;
  current_only?: boolean | undefined;
  include_invalidated?: boolean | undefined;
}

/** The lens a read's input names. */
export const lensOf = (input: LensFields): LensInput => ({
  asOf: input.as_of,
  validAt: input.valid_at,
  space: input.space,
  currentOnly: input.current_only,
  includeInvalidated: input.include_invalidated,
});

export function openRead(ctx: Context, input: LensFields): Promise<Snapshot> {
  return ctx.ledger.at(ctx.tenant, lensOf(input));
}

/**
 * A read of one id and what it links to (get_memory, why): `answer` must be synchronous and without
 * effects, as without a space it may run more than once, over views of more spaces each time, until they
 * hold every id it reads (Ledger.readById).
 */
export function readById<T>(ctx: Context, input: LensFields, answer: (snap: Snapshot) => T): Promise<T> {
  return ctx.ledger.readById(ctx.tenant, lensOf(input), answer);
}
