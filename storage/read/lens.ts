// The lens every read looks through: the knowledge instant, the content instant, the space, and whether
// superseded or invalidated blocks are left out. Inputs name instants or the literal `now`; the ledger
// resolves `now` to its present instant when it opens the read, so the certificate can replay it exactly.
import type { Micros } from '../time.ts';

/** An instant as a read asks for it: microseconds, or the server's present. */
export type LensInstant = Micros | 'now';

export interface LensInput {
  asOf: LensInstant;
  validAt?: LensInstant | undefined;
  space?: string | undefined;
  /** Leave out blocks that are superseded or invalidated as of `asOf` (list, search). */
  currentOnly?: boolean | undefined;
  /** Keep invalidated blocks, each carrying its invalidation (list, search, get). */
  includeInvalidated?: boolean | undefined;
}

export interface ReadLens {
  readonly asOf: Micros;
  readonly validAt?: Micros | undefined;
  readonly space?: string | undefined;
  readonly currentOnly: boolean;
  readonly includeInvalidated: boolean;
}

/** The lens with `now` resolved to `present`. */
export function resolveLens(input: LensInput, present: Micros): ReadLens {
  const at = (t: LensInstant): Micros => (t === 'now' ? present : t);
  return {
    asOf: at(input.asOf),
    validAt: input.validAt === undefined ? undefined : at(input.validAt),
    space: input.space,
    currentOnly: input.currentOnly ?? false,
    includeInvalidated: input.includeInvalidated ?? false,
  };
}
