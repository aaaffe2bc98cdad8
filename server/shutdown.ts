// How a server process stops, for `serve` and `stdio` alike: once, in order (the door stops taking
// requests, the engines close, the ledger lets queued writes commit and closes the store), with a hard
// stop if that takes longer than 15 s. SIGTERM and SIGINT trigger it.
import type { Ledger } from '../storage/ledger.ts';
import type { StartedServices } from './services.ts';

export interface StopPlan {
  /** Where the stop is logged (stdio must keep stdout for the protocol). */
  log: (message: string) => void;
  closeDoor: () => Promise<void> | void;
  started: StartedServices;
  ledger: Ledger;
}

export function gracefulStop(plan: StopPlan): (why: string) => Promise<void> {
  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    plan.log(`${why}: closing`);
    const hardStop = setTimeout(() => process.exit(1), 15_000);
    hardStop.unref();
    await plan.closeDoor();
    await plan.started.close();
    await plan.ledger.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return stop;
}
