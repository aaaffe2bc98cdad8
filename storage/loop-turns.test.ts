import { describe, expect, it } from 'vitest';
import { loopTurns } from './loop-turns.ts';

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
  it('are given once the work has held the loop past the stretch', async () => {
    const check = loopTurns(2);
    expect(
      await letIn(async () => {
        busy(5);
        await check();
      }),
    ).toBe(true);
  });

  it('are not given to work shorter than the stretch', async () => {
    const check = loopTurns(1_000);
    expect(await letIn(check)).toBe(false);
  });

  it('count from the last turn the work took, not from its start', async () => {
    // A stretch far longer than the work, so a busy machine's pauses cannot make the second check yield.
    const check = loopTurns(50);
    busy(60);
    await check(); // a turn: the clock starts again here
    expect(
      await letIn(async () => {
        busy(1);
        await check();
      }),
    ).toBe(false);
  });
});
