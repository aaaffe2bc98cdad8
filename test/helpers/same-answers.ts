// The comparison the reads answered without the tenant's view end with: the same reads answered warm (the
// spaces' views resident from the cold run) and then by the tenant's view, every answer equal to the
// tenant view's, the read named on a difference.
import { expect } from 'vitest';

/** Answers every read in turn, one at a time, in order. */
export async function answerEach<R>(reads: readonly R[], answer: (read: R) => Promise<string>): Promise<string[]> {
  const out: string[] = [];
  for (const read of reads) out.push(await answer(read));
  return out;
}

/** Expects each run's answer to every read to be the tenant view's (`whole`). */
export function expectAsTenantView<R>(reads: readonly R[], whole: readonly string[], ...runs: (readonly string[])[]): void {
  for (const run of runs) for (const [i, read] of reads.entries()) expect([read, run[i]]).toEqual([read, whole[i]]);
}

/** The reads answered warm (as the cold run left the views), then again once `load` made the tenant's view resident. */
export async function warmThenTenantView<R>(
  reads: readonly R[],
  answer: (read: R) => Promise<string>,
  load: () => Promise<unknown>,
): Promise<{ warm: string[]; whole: string[] }> {
  const warm = await answerEach(reads, answer);
  await load();
  return { warm, whole: await answerEach(reads, answer) };
}

/**
 * The whole comparison after a cold run answered every read from spaces (`stats` counts the reads answered
 * from spaces and from the tenant's view): warm, then with the tenant's view resident, each answer the
 * tenant view's, and every read of both runs but the tenant view's own answered from spaces.
 */
export async function expectColdAndWarmAsTenantView<R>(
  reads: readonly R[],
  cold: readonly string[],
  answer: (read: R) => Promise<string>,
  load: () => Promise<unknown>,
  stats: () => { spaces: number; tenant: number },
): Promise<void> {
  expect(stats()).toEqual({ spaces: reads.length, tenant: 0 });
  const { warm, whole } = await warmThenTenantView(reads, answer, load);
  expect(stats()).toEqual({ spaces: 2 * reads.length, tenant: 0 });
  expectAsTenantView(reads, whole, cold, warm);
}
