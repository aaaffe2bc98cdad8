// Stored rows for tests that build views or index tables by hand: every column filled with a plain value,
// the ones a test cares about given.
import { OPEN_END } from '../../storage/time.ts';
import type { IndexRow } from '../../storage/search/index-row.ts';
import type { Ledger } from '../../storage/log/ledger.ts';
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

/** A claim of `id` in `space` as a commit stages it directly (numbered by the stage; nothing of the space loaded for it). */
export function stagedClaim(tenant: string, id: string, space: string): NodeVersion {
  return nodeVersion({
    seq: 0,
    tseq: 0,
    tenant,
    id,
    space,
    statement: `${id} in ${space}`,
    asserted_at: 0,
    valid_from: 0,
    valid_to: Number.MAX_SAFE_INTEGER,
    captured_at: 0,
    known_at: 0,
    hash: 'c'.repeat(64),
  });
}

/** Commits `row` straight through the ledger's stage, numbered and timed by it: no view of its space is loaded. */
export async function commitStaged(l: Pick<Ledger, 'enqueue'>, row: NodeVersion): Promise<void> {
  await l.enqueue((stage) => {
    row.seq = row.tseq = stage.nextSeq();
    row.captured_at = row.known_at = row.asserted_at = row.valid_from = stage.capturedAt;
    stage.addNodes([row]);
  });
}

/** Unit vectors of `n` dimensions from a fixed seed: far enough apart that each row's own is its nearest. */
export function unitVectors(count: number, n: number, seed: number): Float32Array[] {
  let s = seed;
  const next = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  return Array.from({ length: count }, () => {
    const v = Float32Array.from({ length: n }, next);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}
