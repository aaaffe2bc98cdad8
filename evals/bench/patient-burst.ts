// The burst as agents that do what a refusal tells them would send it: many connections, one request in
// flight each, and after a 503 or 429 a wait of its Retry-After before that connection's next request.
// autocannon resends a refusal at once, so its 1,024 connections make a closed loop whose mean answer
// time is 1,024 ÷ the answers per second, refusals included; here the time to be told no is the
// server's (and the shared cores'), not the loop's.
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface PatientRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** A write's id, counted as acknowledged when its answer is 200. */
  ackId?: string | undefined;
  /** What the request is (its kind), for refusals counted per kind. */
  label: string;
}

export interface PatientResult {
  /** ms of each request answered 2xx. */
  answeredMs: number[];
  /** Answers that were neither (4xx, 5xx, 504). */
  failed: number;
  timeouts: number;
  errors: number;
  acked: string[];
  /** The longest Retry-After given, s. */
  longestRetryAfterS: number;
  /** ms of each refusal (503 or 429), per request label. */
  refusedMsBy: Map<string, number[]>;
  /** ms of the refusals of requests sent on a connection already answered before (not its first). */
  refusedLaterMs: number[];
  /**
   * This process's own event-loop delay over the burst, p99 and max ms: an answer that arrived while the
   * loop was busy is timed when the loop reads it, so every figure above includes up to this much.
   */
  clientLoopMs: { p99: number; max: number };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One request; `ms` counts from the moment the request was handed to the kernel ('finish'), not from the
 * call: the burst's first wave makes 1,024 calls in one synchronous stretch of this process, and counted
 * from the call, every first request carried that stretch as well (docs/load.md).
 */
function send(agent: Agent, base: URL, r: PatientRequest, timeoutMs: number): Promise<{ status: number; retryAfterS: number; ms: number }> {
  return new Promise((resolve, reject) => {
    let sentAt = Number.NaN;
    const req = request({ host: base.hostname, port: base.port, method: r.method, path: r.path, headers: r.headers, agent }, (res) => {
      res.resume();
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, retryAfterS: Number(res.headers['retry-after'] ?? 1) || 1, ms: performance.now() - sentAt }),
      );
      res.once('error', reject);
    });
    req.once('finish', () => (sentAt = performance.now()));
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.once('error', reject);
    req.end(r.body);
  });
}

/** `connections` loops for `seconds`, each asking `next(connection)` for its next request. */
export async function patientBurst(
  base: string,
  connections: number,
  seconds: number,
  next: (connection: number) => PatientRequest,
  timeoutMs = 10_000,
): Promise<PatientResult> {
  const url = new URL(base);
  const out: PatientResult = {
    answeredMs: [],
    failed: 0,
    timeouts: 0,
    errors: 0,
    acked: [],
    longestRetryAfterS: 0,
    refusedMsBy: new Map(),
    refusedLaterMs: [],
    clientLoopMs: { p99: 0, max: 0 },
  };
  const end = performance.now() + seconds * 1000;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      let first = true;
      try {
        for (; performance.now() < end; first = false) {
          const r = next(c);
          let answer: { status: number; retryAfterS: number; ms: number };
          try {
            answer = await send(agent, url, r, timeoutMs);
          } catch (error) {
            if ((error as { code?: string }).code === 'TIMEOUT') out.timeouts++;
            else out.errors++;
            continue;
          }
          const { ms } = answer;
          if (answer.status === 503 || answer.status === 429) {
            const refused = out.refusedMsBy.get(r.label) ?? [];
            out.refusedMsBy.set(r.label, refused);
            refused.push(ms);
            if (!first) out.refusedLaterMs.push(ms);
            out.longestRetryAfterS = Math.max(out.longestRetryAfterS, answer.retryAfterS);
            await sleep(Math.min(answer.retryAfterS * 1000, Math.max(0, end - performance.now())));
          } else if (answer.status >= 200 && answer.status < 300) {
            out.answeredMs.push(ms);
            if (r.ackId !== undefined) out.acked.push(r.ackId);
          } else out.failed++;
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  loop.disable();
  out.clientLoopMs = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  return out;
}
