// What the search index stores per node version, what a search filters on, and what it answers: the
// shapes shared by LanceDB's module and the in-memory copies beside it, kept apart so neither imports the
// other for them.
import type { Micros } from '../time.ts';

export interface IndexRow {
  id: string;
  seq: number;
  space: string;
  kind: string;
  category: string | null;
  known_at: Micros;
  asserted_at: Micros;
  valid_from: Micros;
  valid_to: Micros;
  text: string;
  vector: Float32Array;
  /** Word-vector mean (word-vectors.ts), when the index has that column. */
  wvec?: Float32Array | undefined;
}

export interface RowFilter {
  asOf: Micros;
  validAt?: Micros | undefined;
  space?: string | undefined;
  kind?: string | undefined;
  category?: string | undefined;
  /** Selects the rows hidden by asOf (known later) instead of the visible ones: for masked counts. */
  hidden?: boolean;
  /** Every indexed row is known at asOf (a read at the present): the known_at test is left out. */
  allKnown?: boolean;
  /** Only rows asserted in [from, to): a date the query names (time-query.ts). */
  asserted?: { from: Micros; to: Micros } | undefined;
  /** Node ids left out before ranking (superseded or invalidated as of the read). */
  excludeIds?: readonly string[] | undefined;
  /** Only these node ids (counting invalidated matches). */
  onlyIds?: readonly string[] | undefined;
}

export interface Hit {
  id: string;
  seq: number;
  score: number;
}
