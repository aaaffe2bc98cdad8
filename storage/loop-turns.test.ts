import { describe, expect, it } from 'vitest';
import { loopTurn, loopTurns } from './loop-turns.ts';

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/** Whether a callback queued for the loop's next turn ran while `work` ran. */
async function letIn(work: () => Promise<void>): Promise<boolean> {
  let ran = false;
  setImmediate(() => (ran = true));
  await work();
  return ran;
}

describe('loop turns', () => {
  it('are given once the loop has been held past the stretch', async () => {
    await loopTurn();
    const check = loopTurns(2);
    expect(
      await letIn(async () => {
        busy(5);
        await check();
      }),
    ).toBe(true);
  });

  it('are not given to work shorter than the stretch', async () => {
    await loopTurn();
    const check = loopTurns(1_000);
    expect(await letIn(check)).toBe(false);
  });

  it('count the loop held by all work since its last turn, not by one caller', async () => {
    await loopTurn();
    busy(1.5); // another caller's work, under the stretch alone
    // Resumed without the loop in between (as a promise reaction): it starts under the stretch alone too,
    // but the loop has been held for both.
    const second = loopTurns(2);
    expect(
      await letIn(async () => {
        busy(1.5);
        await second();
      }),
    ).toBe(true);
  });
});
