// Stored rows for tests that build views or index tables by hand: every column filled with a plain value,
// the ones a test cares about given.
import { OPEN_END } from '../../storage/time.ts';
import type { IndexRow } from '../../storage/search/index-row.ts';
import type { NodeVersion } from '../../storage/types.ts';

export function nodeVersion(row: Pick<NodeVersion, 'seq' | 'id'> & Partial<NodeVersion>): NodeVersion {
  return {
    tenant: 't',
    space: 's',
    kind: 'claim',
    statement: null,
    category: null,
    payload: '{}',
    asserted_at: 1,
    valid_from: 1,
    valid_to: OPEN_END,
    captured_at: 1,
    known_at: 1,
    batch_id: null,
    fact_key: null,
    fact_value: null,
    hash: `h${row.seq}`,
    ...row,
    tseq: row.tseq ?? row.seq,
  };
}

/** A search index row numbered `i`: its vectors (4 and 2 dimensions) and text follow from `i`. */
export function indexRow(i: number, over: Partial<IndexRow> = {}): IndexRow {
  return {
    id: `n${i}`,
    seq: i,
    space: 's',
    kind: 'claim',
    category: i % 2 === 0 ? null : 'c',
    known_at: 1000 + i,
    asserted_at: 1000,
    valid_from: 0,
    valid_to: 9e15,
    text: `row ${i} é`,
    vector: Float32Array.from({ length: 4 }, (_, k) => i + k / 8),
    wvec: Float32Array.from({ length: 2 }, (_, k) => -i - k),
    ...over,
  };
}
