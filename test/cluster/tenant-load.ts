// A tenant worth moving, and the client side of a move: rows with edges, a declared fact and its verdicts,
// a backfill batch and invalidations, written through the cluster's proxy; a fixed set of answers (list
// pages, get, why, search, resolve at a fixed as_of/valid_at) to compare before and after; and a paced
// writer that keeps writing while a move runs, retrying what it is refused. Used by the cluster test and
// the cluster bench.
import type { Answer, Cluster } from './harness.ts';

const REGIONS = ['Assam', 'Darjeeling', 'Uji', 'Yunnan', 'Kenya', 'Ceylon', 'Fujian'];
const BATCH_MIN = 500;

/**
 * Writes `rows` nodes (plus edges between neighbours) for `tenant` in space user:<tenant>; returns some ids.
 * Requests of 500 nodes, or of up to 5,000 for a large tenant (a 100k-row seed in 20 requests, not 200).
 */
export async function seedTenant(cluster: Cluster, key: string, tenant: string, rows: number): Promise<{ ids: string[] }> {
  const batch = Math.max(BATCH_MIN, Math.min(5_000, Math.floor(rows / 20)));
  const ok = async (what: string, r: Promise<Answer>): Promise<Answer> => {
    const a = await r;
    if (a.status !== 200) throw new Error(`${what}: ${a.status} ${a.text.slice(0, 300)}`);
    return a;
  };
  const space = `user:${tenant}`;
  await ok('declare', cluster.request('POST', '/v1/facts', { key, body: { fact_key: 'price', key_fields: [] } }));
  const ids: string[] = [];
  for (let start = 0; start < rows; start += batch) {
    const n = Math.min(batch, rows - start);
    const nodes = Array.from({ length: n }, (_, j) => {
      const i = start + j;
      const day = String(1 + (i % 28)).padStart(2, '0');
      const month = String(1 + (Math.floor(i / 28) % 12)).padStart(2, '0');
      return {
        id: `${tenant}-n${i}`,
        kind: i % 7 === 0 ? 'prediction' : 'claim',
        statement: `Row ${i} of ${tenant}: the ${REGIONS[i % REGIONS.length]} tea harvest sold at ${10 + (i % 97)} dollars a kilo`,
        category: `c${i % 5}`,
        asserted_at: `2024-${month}-${day}T00:00:00Z`,
        ...(i % 50 === 0 ? { fact_key: 'price', fact_value: 10 + (i % 97) } : {}),
        ...(i % 11 === 0 ? { valid_to: '2025-06-01T00:00:00Z' } : {}),
      };
    });
    const edges = nodes
      .slice(1)
      .filter((_, j) => j % 3 === 0)
      .map((node, j) => ({
        source_id: nodes[j * 3]?.id ?? node.id,
        target_id: node.id,
        edge_type: j % 2 === 0 ? 'CAUSES' : 'SUPPORTS',
      }));
    // One batch in five is backfill: declared as known on the first of June 2024.
    const backfill = (start / batch) % 5 === 2 ? { backfill: { declared_captured_at: '2024-06-01T00:00:00Z', reason: 'crm import' } } : {};
    await ok(`batch at ${start}`, cluster.request('POST', '/v1/memories', { key, body: { space, nodes, edges, ...backfill } }));
    ids.push(nodes[0]?.id ?? '', nodes[Math.floor(n / 2)]?.id ?? '');
  }
  // Invalidations, one of them as backfill, and verdicts of the declared fact.
  for (let i = 0; i < 10; i++) {
    // The first is recorded as backfill: a row of the backfilled batch (known since June 2024).
    const at = i === 0 ? 2 * batch + 3 : i * 97 + 3;
    if (at >= rows) continue;
    const id = `${tenant}-n${at}`;
    await ok(
      `invalidate ${id}`,
      cluster.request('POST', `/v1/memories/${encodeURIComponent(id)}/invalidate`, {
        key,
        body: {
          reason: 'the source withdrew it',
          ...(i === 0 ? { backfill: { declared_captured_at: '2024-07-01T00:00:00Z', reason: 'late' } } : {}),
        },
      }),
    );
    ids.push(id);
  }
  const now = await serverNow(cluster);
  for (const as_of of ['2024-08-01T00:00:00Z', now])
    await ok('resolve', cluster.request('POST', '/v1/resolve', { key, body: { fact: 'price', as_of } }));
  return { ids };
}

export async function serverNow(cluster: Cluster, base?: string): Promise<string> {
  return (JSON.parse((await cluster.request('GET', '/v1/version', { base })).text) as { now: string }).now;
}

/** SPEC: a certificate's tx_as_of is the instant the server answered, so it differs between any two answers. */
export const withoutAnswerTime = (text: string): string => text.replace(/"tx_as_of":"[^"]*"/g, '"tx_as_of":"-"');

export interface Snapshot {
  answers: Map<string, string>;
  /** The cursor of the first list page, to be followed after the move. */
  cursor: string;
}

/** The fixed answers: everything read at `asOf` (and a `valid_at`), through the proxy. */
export async function snapshot(cluster: Cluster, key: string, tenant: string, ids: string[], asOf: string): Promise<Snapshot> {
  const answers = new Map<string, string>();
  const read = async (name: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    let r = await cluster.request(method, path, { key, body });
    // A search can outlast its deadline while the index embeds a large seed: retried as the 504 says, bounded.
    for (let i = 0; i < 30 && (r.status === 503 || r.status === 504); i++) {
      await new Promise((res) => setTimeout(res, 2_000));
      r = await cluster.request(method, path, { key, body });
    }
    if (r.status !== 200) throw new Error(`${name}: ${r.status} ${r.text.slice(0, 300)}`);
    answers.set(name, withoutAnswerTime(r.text));
    return r;
  };
  // Scoped to the seeded space: a certificate counts the rows it masks (learned after as_of) in its scope,
  // and the writer keeps adding such rows to its own space.
  const space = `user:${tenant}`;
  const q = `as_of=${encodeURIComponent(asOf)}&space=${encodeURIComponent(space)}`;
  const first = await read('list page 1', 'GET', `/v1/memories?${q}&limit=100`);
  const cursor = (JSON.parse(first.text) as { next_cursor: string | null }).next_cursor;
  if (!cursor) throw new Error('list: no second page');
  await read('list page 2', 'GET', `/v1/memories?${q}&limit=100&cursor=${encodeURIComponent(cursor)}`);
  await read('list valid_at', 'GET', `/v1/memories?${q}&valid_at=2025-07-01T00:00:00Z&limit=50&category=c2`);
  await read('list as_of 2024-06-15', 'GET', `/v1/memories?as_of=2024-06-15T00:00:00Z&space=${encodeURIComponent(space)}&limit=50`);
  for (const id of ids.slice(0, 8)) {
    await read(`get ${id}`, 'GET', `/v1/memories/${encodeURIComponent(id)}?${q}`);
    await read(`why ${id}`, 'GET', `/v1/memories/${encodeURIComponent(id)}/why?${q}`);
  }
  for (const query of ['Darjeeling tea harvest price', 'what sold at 42 dollars a kilo', `row 777 of ${tenant}`])
    await read(`search ${query}`, 'POST', '/v1/search', { query, as_of: asOf, limit: 10, space });
  await read('search valid_at', 'POST', '/v1/search', { query: 'Kenya harvest', as_of: asOf, valid_at: '2025-07-01T00:00:00Z', space });
  // A resolve records its verdict the first time (the same answer is recorded once): snapshot twice.
  await read('resolve', 'POST', '/v1/resolve', { fact: 'price', as_of: asOf, space });
  await read('resolve valid_at', 'POST', '/v1/resolve', { fact: 'price', as_of: asOf, valid_at: '2024-03-01T00:00:00Z', space });
  return { answers, cursor };
}

export interface WriterReport {
  /** Ids of acknowledged writes (200). */
  acknowledged: string[];
  /** Refused 503 (frozen, or the server down) and retried after Retry-After. */
  retried503: number;
  /** No answer (the connection broke: a server killed mid-request) or a 502, retried: the same row again is a no-op if it was written. */
  retriedBroken: number;
  /** Refused 421 (the proxy not yet re-routed) and retried. */
  retried421: number;
  /** Other answers, which the test expects none of. */
  failures: string[];
  attempts: number;
}

/**
 * Writes one row at a time to space `live:<tenant>` at about `perSecond`, until stopped (or `maxWrites`, or
 * `maxMs`). A 503 is retried after its Retry-After, a 421 after a moment, a broken connection or a 502
 * after a second, the same row each time (re-sending a written row writes nothing), so every row is
 * eventually acknowledged or counted as failed.
 */
export function startWriter(
  cluster: Cluster,
  key: string,
  tenant: string,
  opts: { perSecond?: number; maxWrites?: number; maxMs?: number } = {},
): { stop: () => Promise<WriterReport>; report: WriterReport } {
  const perSecond = opts.perSecond ?? 50;
  const maxWrites = opts.maxWrites ?? 20_000;
  const until = performance.now() + (opts.maxMs ?? 180_000);
  const report: WriterReport = { acknowledged: [], retried503: 0, retried421: 0, retriedBroken: 0, failures: [], attempts: 0 };
  let stopped = false;
  const run = (async () => {
    for (let i = 0; !stopped && i < maxWrites && performance.now() < until; i++) {
      const t0 = performance.now();
      const id = `${tenant}-live${i}`;
      for (let attempt = 0; attempt < 100 && performance.now() < until; attempt++) {
        report.attempts++;
        let r: Answer;
        try {
          r = await cluster.request('POST', '/v1/memories', {
            key,
            body: { space: `live:${tenant}`, nodes: [{ id, kind: 'claim', statement: `live write ${i} of ${tenant}` }] },
          });
        } catch {
          report.retriedBroken++;
          await new Promise((res) => setTimeout(res, 1000));
          continue;
        }
        if (r.status === 200) {
          report.acknowledged.push(id);
          break;
        }
        if (r.status === 502) {
          report.retriedBroken++;
          await new Promise((res) => setTimeout(res, 1000));
          continue;
        }
        if (r.status === 503) {
          report.retried503++;
          await new Promise((res) => setTimeout(res, 1000 * Number(r.headers.get('retry-after') ?? '1')));
          continue;
        }
        if (r.status === 421) {
          report.retried421++;
          await new Promise((res) => setTimeout(res, 50));
          continue;
        }
        report.failures.push(`${id}: ${r.status} ${r.text.slice(0, 200)}`);
        break;
      }
      const wait = 1000 / perSecond - (performance.now() - t0);
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    }
  })();
  return {
    report,
    stop: async () => {
      stopped = true;
      await run;
      return report;
    },
  };
}

/** Every id of space `live:<tenant>` the tenant holds now, paging through the list with its cursors. */
export async function liveIds(cluster: Cluster, key: string, tenant: string): Promise<Set<string>> {
  const asOf = await serverNow(cluster);
  const ids = new Set<string>();
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const r = await cluster.request(
      'GET',
      `/v1/memories?as_of=${encodeURIComponent(asOf)}&space=${encodeURIComponent(`live:${tenant}`)}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { key },
    );
    if (r.status !== 200) throw new Error(`list live: ${r.status} ${r.text.slice(0, 200)}`);
    const body = JSON.parse(r.text) as { items: { id: string }[]; next_cursor: string | null };
    for (const item of body.items) ids.add(item.id);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return ids;
}
