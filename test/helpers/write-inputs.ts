// Write requests for tests that compare two ledgers: nodes carry a given valid_from, so both store the same
// rows whatever their capture instants.
import type { WriteInput } from '../../storage/log/write-plan.ts';

export const DAY = 86_400_000_000;
export const T0 = Date.UTC(2025, 0, 1) * 1000;

export const claimInput = (id: string, extra: Partial<WriteInput['nodes'][number]> = {}): WriteInput['nodes'][number] => ({
  id,
  kind: 'claim',
  statement: `about ${id}`,
  valid_from: T0,
  ...extra,
});

export const edgeInput = (source_id: string, edge_type: string, target_id: string): WriteInput['edges'][number] =>
  ({ source_id, target_id, edge_type }) as WriteInput['edges'][number];
