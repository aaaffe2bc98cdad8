// A stored block row for tests that build views by hand: every column filled with a plain value, the
// ones a test cares about given.
import { OPEN_END } from '../../storage/time.ts';
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
