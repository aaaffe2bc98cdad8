// The search index's own threads yield the CPU to the event loop. Reads are answered from memory on the
// main thread, but after a bulk import LanceDB builds its full-text and vector indexes for tens of seconds
// on every core: measured on two cores after a 200k-row import, get p95 went from 2.4 ms on a quiet server
// to 16 ms while the build ran. On Linux a thread is a task with its own nice value, so LanceDB's threads
// (named `lance-cpu` and `tokio-rt-worker`; Kuzu, V8 and libuv name theirs otherwise) are lowered one by
// one: the event loop then runs first whenever it has work, and the index gets every cycle it leaves.
// Off by default: the same threads run every search's LanceDB queries, and on a machine shared with
// other busy processes a lowered index answers later. Measured on two shared cores (LoCoMo conversations
// 1-2, live replay, four runs each, load 1.7-8.6): p95 35.5-76.1 ms at the server's priority and
// 39.8-113.3 ms at nice 10, too noisy to call either way, so an operator opts in for bulk imports.
// Elsewhere (no /proc/self/task) this does nothing.
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

const INDEX_THREADS = new Set(['lance-cpu', 'tokio-rt-worker']);
/** LanceDB starts threads on demand: new ones are looked for this often. */
const SWEEP_MS = 2000;

/** The nice value for the index's threads from SVC_INDEX_NICE (0–19; 0, the default, leaves them alone). */
export function indexNice(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SVC_INDEX_NICE;
  if (raw === undefined || raw.trim() === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 19)
    throw new Error(`SVC_INDEX_NICE must be an integer from 0 to 19, got ${JSON.stringify(raw)}`);
  return n;
}

/** Lowers every index thread of this process below `nice` to it; returns how many it lowered. */
export function lowerIndexThreads(nice: number, taskDir = '/proc/self/task'): number {
  let tasks: string[];
  try {
    tasks = readdirSync(taskDir);
  } catch {
    return 0; // not Linux
  }
  let lowered = 0;
  for (const task of tasks) {
    try {
      if (!INDEX_THREADS.has(readFileSync(`${taskDir}/${task}/comm`, 'utf8').trim())) continue;
      const tid = Number(task);
      if (getPriority(tid) >= nice) continue;
      setPriority(tid, nice);
      lowered++;
    } catch {
      // The thread ended between the listing and the call.
    }
  }
  return lowered;
}

/** Keeps the index's threads, present and future, at `nice` until the returned function is called. */
export function keepIndexThreadsLow(nice: number): () => void {
  if (nice <= 0) return () => undefined;
  lowerIndexThreads(nice);
  const timer = setInterval(() => lowerIndexThreads(nice), SWEEP_MS);
  timer.unref();
  return () => clearInterval(timer);
}
