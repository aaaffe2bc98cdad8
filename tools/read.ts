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
export function lensOf(input: LensFields): LensInput {
  return {
    asOf: input.as_of,
    validAt: input.valid_at,
    space: input.space,
    currentOnly: input.current_only,
    includeInvalidated: input.include_invalidated,
  };
}

export function openRead(ctx: Context, input: LensFields): Promise<Snapshot> {
  return ctx.ledger.at(ctx.tenant, lensOf(input));
}
