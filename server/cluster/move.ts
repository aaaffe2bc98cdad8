// `memory-ledger move TENANT --to SERVER`: carries a tenant's rows verbatim to another server and
// re-points its placement, so it answers there exactly as it did here.
//
//   1. bulk copy, page by page in tseq order, while the tenant stays writable; again from where the last
//      pass ended until a pass copies at most `tailRows` rows (or `maxRounds` passes);
//   2. freeze: one etcd transaction sets state=frozen at the same epoch, compared on the record's mod
//      revision; then the source's own placement route is polled until it reports that record and no
//      request of the tenant in flight (its gate counts them): from then on nothing can land on the source;
//   3. copy the tail; 4. compare the digests of both copies up to the source's last tseq: the prefix
//      copied while writable is compared before the freeze, the tail under it;
//   5. one etcd transaction: epoch+1, server=target, state=active, compared on the frozen record;
//   6. the placement agent updates HAProxy's maps (it watches etcd), the source answers 421 from then on;
//      its copy is dropped (unless kept).
//
// A move that fails or is interrupted before step 5 leaves the tenant on its source, writable: the
// `finally` unfreezes it at the old epoch and drops the target's partial copy. A mover killed outright
// leaves its lock to expire (a lease of LOCK_TTL_S); `move --abort TENANT`, or the next move, then
// unfreezes the tenant and drops its copies on the servers that do not serve it.
import { hostname } from 'node:os';
import type { Etcd3 } from 'etcd3';
import { OperatorClient } from './operator-client.ts';
import { PLACEMENT_PREFIX, parsePlacement, SERVERS_PREFIX, type PlacementRecord } from './placement.ts';

/** `/moves/<tenant>` holds the running move, under the mover's lease: a dead mover's lock goes away. */
export const MOVES_PREFIX = '/moves/';
export const LOCK_TTL_S = 5;
/**
 * Rows per page of the copy when not given: every page of the export scans each of the source's tables
 * once, so pages of 2,000 read a 136k-row tenant at about 1,000 rows/s under writes (68 pages); a page of
 * 10,000 is about 5 MB of JSON, far below SVC_MAX_BODY_BYTES.
 */
export const DEFAULT_PAGE_ROWS = 10_000;

export class MoveError extends Error {}

export interface MoveOptions {
  etcd: Etcd3;
  operatorKey: string;
  tenant: string;
  to: string;
  /** Rows per page of the copy. */
  pageRows?: number;
  /** Freeze once a pass copied at most this many rows. */
  tailRows?: number;
  maxRounds?: number;
  /** How long the source may take to see the freeze and finish the requests it admitted before it. */
  quiesceMs?: number;
  /** Stays frozen this long before the tail copy: for drills that kill a mover while frozen. */
  holdFrozenMs?: number;
  /** Keep the source's copy after the move (by default it is dropped once the source sees the new placement). */
  keepSource?: boolean;
  signal?: AbortSignal;
  log: (line: string) => void;
}

export interface MoveResult {
  tenant: string;
  from: string;
  to: string;
  epoch: number;
  rows: number;
  bulkRows: number;
  bulkSeconds: number;
  rounds: number;
  /** Time in the source's export calls (reading the rows and sending them), bulk and tail. */
  exportSeconds: number;
  /** Time in the target's import calls (receiving the rows and committing them). */
  importSeconds: number;
  tailRows: number;
  /** From the freeze transaction to the re-pointing one. */
  frozenMs: number;
  /** Part of the freeze spent waiting for the source to see it and finish what it had admitted. */
  quiesceMs: number;
  /** The digests compared: of the rows copied while writable, then of the tail. */
  digest: string;
  /**
   * The source's copy after the move: deleted; still being deleted there (the move does not wait for a
   * large copy: the source refuses the tenant meanwhile and finishes on its own, across restarts too);
   * or kept (--keep-source, or the source refused or did not answer: `move --abort` removes it).
   */
  sourceCopy: { state: 'deleted' | 'deleting' | 'kept'; rows: number };
  /** From the re-pointing transaction until the target reported the new placement. */
  targetSawMs: number | null;
  totalSeconds: number;
}

interface Placed {
  record: PlacementRecord;
  mod: number;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(2);
const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      },
      { once: true },
    );
  });

export async function readServers(etcd: Etcd3): Promise<Map<string, string>> {
  const res = await etcd.getAll().prefix(SERVERS_PREFIX).exec();
  const servers = new Map<string, string>();
  for (const kv of res.kvs) {
    try {
      const url = (JSON.parse(kv.value.toString('utf8')) as { url?: unknown }).url;
      if (typeof url === 'string') servers.set(kv.key.toString('utf8').slice(SERVERS_PREFIX.length), url);
    } catch {
      // An entry that is not ours: not a server.
    }
  }
  return servers;
}

async function readPlacement(etcd: Etcd3, tenant: string): Promise<Placed | null> {
  const res = await etcd.get(`${PLACEMENT_PREFIX}${tenant}`).exec();
  const kv = res.kvs[0];
  if (!kv) return null;
  const record = parsePlacement(kv.value.toString('utf8'));
  if ('broken' in record) throw new MoveError(`the placement of ${tenant} in etcd is invalid (${record.broken}); fix it first`);
  return { record, mod: Number(kv.mod_revision) };
}

interface Lock {
  key: string;
  mod: number;
  release: () => Promise<void>;
}

/** Takes `/moves/<tenant>` under a lease, or says which move holds it. */
async function lock(etcd: Etcd3, tenant: string, what: Record<string, unknown>): Promise<Lock> {
  const key = `${MOVES_PREFIX}${tenant}`;
  const lease = etcd.lease(LOCK_TTL_S);
  const id = await lease.grant();
  const value = JSON.stringify({ ...what, mover: `${hostname()}:${process.pid}`, started_at: new Date().toISOString() });
  const res = await etcd.if(key, 'Create', '==', 0).then(etcd.put(key).value(value).lease(id)).else(etcd.get(key)).commit();
  if (!res.succeeded) {
    await lease.revoke().catch(() => undefined);
    const held = res.responses[0]?.response_range?.kvs[0]?.value.toString('utf8') ?? '?';
    throw new MoveError(
      `another move of ${tenant} is running (${held}); wait for it, or stop it (its lock lapses ${LOCK_TTL_S} s after its mover dies)`,
    );
  }
  return {
    key,
    mod: Number(res.header.revision),
    release: async () => {
      await lease.revoke().catch(() => undefined);
    },
  };
}

/** Sets the tenant active at its epoch again, compared on the record read (`from`): true if done. */
async function thaw(etcd: Etcd3, tenant: string, placed: Placed): Promise<boolean> {
  const key = `${PLACEMENT_PREFIX}${tenant}`;
  const active: PlacementRecord = { ...placed.record, state: 'active' };
  const res = await etcd
    .if(key, 'Mod', '==', placed.mod)
    .then(etcd.put(key).value(JSON.stringify(active)))
    .commit();
  return res.succeeded;
}

/** Drops the tenant's copy on every registered server that does not serve it; returns what it did. */
async function dropStrays(
  client: OperatorClient,
  servers: Map<string, string>,
  tenant: string,
  placedOn: string,
  log: (line: string) => void,
): Promise<boolean> {
  let all = true;
  for (const [id, url] of servers) {
    if (id === placedOn) continue;
    try {
      const dropped = await client.dropAll(url, tenant);
      log(`  dropped any copy of ${tenant} on ${id} (${dropped.deleted} rows)`);
    } catch (error) {
      all = false;
      log(`  could not drop the copy of ${tenant} on ${id}: ${(error as Error).message}`);
    }
  }
  return all;
}

/**
 * `move --abort`: for a tenant whose mover died. Unfreezes it at its epoch if frozen, and drops its copies on
 * the registered servers that do not serve it. Refused while a mover holds the tenant's lock.
 */
export async function abortMove(opts: Pick<MoveOptions, 'etcd' | 'operatorKey' | 'tenant' | 'log'>): Promise<void> {
  const { etcd, tenant, log } = opts;
  const held = await lock(etcd, tenant, { abort: true });
  try {
    const placed = await readPlacement(etcd, tenant);
    if (placed === null) throw new MoveError(`tenant ${tenant} is not placed: nothing to recover`);
    if (placed.record.state === 'frozen') {
      if (!(await thaw(etcd, tenant, placed))) throw new MoveError(`the placement of ${tenant} changed meanwhile; run --abort again`);
      log(`unfroze ${tenant} on ${placed.record.server} at epoch ${placed.record.epoch}`);
    } else log(`${tenant} is active on ${placed.record.server} at epoch ${placed.record.epoch}`);
    const client = new OperatorClient({ operatorKey: opts.operatorKey, retryMs: 3_000 });
    if (!(await dropStrays(client, await readServers(etcd), tenant, placed.record.server, log)))
      throw new MoveError('some copies could not be dropped (their servers are down?); run --abort again once they answer');
  } finally {
    await held.release();
  }
}

export async function moveTenant(opts: MoveOptions): Promise<MoveResult> {
  const { etcd, tenant, to, log, signal } = opts;
  const pageRows = opts.pageRows ?? DEFAULT_PAGE_ROWS;
  const tailRows = opts.tailRows ?? 1_000;
  const maxRounds = opts.maxRounds ?? 5;
  const quiesceMs = opts.quiesceMs ?? 10_000;
  const client = new OperatorClient({ operatorKey: opts.operatorKey, signal });
  // Clean-up runs after an interruption too: its client has no signal.
  const cleaner = new OperatorClient({ operatorKey: opts.operatorKey, retryMs: 5_000 });
  const started = performance.now();

  const servers = await readServers(etcd);
  const targetUrl = servers.get(to);
  if (targetUrl === undefined)
    throw new MoveError(`server ${to} is not registered under ${SERVERS_PREFIX} (registered: ${[...servers.keys()].join(', ') || 'none'})`);
  const held = await lock(etcd, tenant, { to });
  const placementKey = `${PLACEMENT_PREFIX}${tenant}`;
  let frozen: Placed | null = null;
  let committed = false;
  let copyStarted = false;
  try {
    let placed = await readPlacement(etcd, tenant);
    if (placed === null) throw new MoveError(`tenant ${tenant} is not placed: place it on the server that holds its rows first`);
    if (placed.record.state === 'frozen') {
      // The lock is ours, so whoever froze it is gone.
      log(`${tenant} is frozen at epoch ${placed.record.epoch} by a move that died: unfreezing it first`);
      if (!(await thaw(etcd, tenant, placed))) throw new MoveError(`the placement of ${tenant} changed meanwhile; try again`);
      placed = await readPlacement(etcd, tenant);
      if (placed === null) throw new MoveError(`the placement of ${tenant} vanished`);
    }
    const { server: from, epoch } = placed.record;
    if (from === to) throw new MoveError(`${tenant} is already placed on ${to}`);
    const sourceUrl = servers.get(from);
    if (sourceUrl === undefined) throw new MoveError(`the source ${from} is not registered under ${SERVERS_PREFIX}: is it running?`);
    log(`move ${tenant}: ${from} (${sourceUrl}) -> ${to} (${targetUrl}), epoch ${epoch}`);

    // A copy left by an earlier move away from the target, or by a failed one: start from nothing.
    copyStarted = true;
    await client.dropAll(targetUrl, tenant);

    let after = 0;
    let copiedTo = 0;
    let exportMs = 0;
    let importMs = 0;
    /** Copies every row after `after`; returns how many and the source's last tseq on its last page. */
    const pass = async (): Promise<{ rows: number; last: number }> => {
      let rows = 0;
      for (;;) {
        signal?.throwIfAborted();
        const t0 = performance.now();
        const page = await client.rows(sourceUrl, tenant, after, pageRows);
        const t1 = performance.now();
        exportMs += t1 - t0;
        if (page.rows.length > 0) {
          const stored = await client.store(targetUrl, tenant, page.rows);
          importMs += performance.now() - t1;
          rows += page.rows.length;
          copiedTo = stored.last_tseq;
        }
        if (page.next_after === null) {
          after = Math.max(after, copiedTo);
          return { rows, last: page.last_tseq };
        }
        after = page.next_after;
      }
    };

    let bulkRows = 0;
    let rounds = 0;
    const bulkStart = performance.now();
    for (;;) {
      rounds++;
      const t = performance.now();
      const r = await pass();
      bulkRows += r.rows;
      log(`  bulk pass ${rounds}: ${r.rows} rows in ${seconds(performance.now() - t)} s (source at tseq ${r.last})`);
      if (r.rows <= tailRows || rounds >= maxRounds) break;
    }
    const bulkSeconds = (performance.now() - bulkStart) / 1000;
    log(
      `  bulk copy: ${bulkRows} rows in ${bulkSeconds.toFixed(2)} s, ${rounds} pass${rounds > 1 ? 'es' : ''}, tenant writable throughout`,
    );

    // The copied prefix is checked while the tenant is still writable: rows are never changed and a new one
    // always gets a higher tseq, so rows up to `prefix` stay as they are; the freeze then checks the tail only.
    const prefix = after;
    const prefixStart = performance.now();
    const [pa, pb] = await Promise.all([client.digest(sourceUrl, tenant, prefix), client.digest(targetUrl, tenant, prefix)]);
    if (pa.digest !== pb.digest || pa.rows !== pb.rows)
      throw new MoveError(`digests differ up to tseq ${prefix}: source ${pa.rows} rows ${pa.digest}, target ${pb.rows} rows ${pb.digest}`);
    log(`  digests equal up to tseq ${prefix}: ${pa.rows} rows, ${pa.digest} (${seconds(performance.now() - prefixStart)} s, writable)`);

    // Freeze at the same epoch, only if the record and our lock are as read.
    const frozenRecord: PlacementRecord = { server: from, epoch, state: 'frozen' };
    const freezeTx = await etcd
      .if(placementKey, 'Mod', '==', placed.mod)
      .and(held.key, 'Mod', '==', held.mod)
      .then(etcd.put(placementKey).value(JSON.stringify(frozenRecord)))
      .commit();
    if (!freezeTx.succeeded) throw new MoveError(`the placement of ${tenant} changed during the bulk copy (or this mover lost its lock)`);
    frozen = { record: frozenRecord, mod: Number(freezeTx.header.revision) };
    const frozenAt = performance.now();
    log(`  frozen at epoch ${epoch} (etcd revision ${frozen.mod})`);

    // The source has seen the freeze when its view is at or past our revision and says frozen; then the
    // requests it admitted before (its in-flight count) are the last writes it will take.
    const quiesceDeadline = performance.now() + quiesceMs;
    let inFlightSeen = 0;
    for (;;) {
      const view = await client.view(sourceUrl, tenant);
      const sawFreeze = view.revision >= frozen.mod && view.placement?.state === 'frozen' && view.placement.epoch === epoch;
      if (sawFreeze) inFlightSeen = Math.max(inFlightSeen, view.in_flight);
      if (sawFreeze && view.in_flight === 0) break;
      if (performance.now() > quiesceDeadline)
        throw new MoveError(
          sawFreeze
            ? `the source still runs ${view.in_flight} request(s) of ${tenant} after ${quiesceMs} ms`
            : `the source has not seen the freeze within ${quiesceMs} ms (its view is at etcd revision ${view.revision})`,
        );
      await sleep(10, signal);
    }
    const quiesced = performance.now() - frozenAt;
    log(`  source saw the freeze and finished its ${inFlightSeen} request(s) in flight after ${quiesced.toFixed(0)} ms`);
    if (opts.holdFrozenMs) await sleep(opts.holdFrozenMs, signal);

    const tailStart = performance.now();
    const tail = await pass();
    if (copiedTo !== tail.last && !(tail.last === 0 && copiedTo === 0))
      throw new MoveError(`the target ends at tseq ${copiedTo} but the source at ${tail.last}`);
    log(`  tail: ${tail.rows} rows in ${seconds(performance.now() - tailStart)} s (last tseq ${tail.last})`);

    const [a, b] = await Promise.all([
      client.digest(sourceUrl, tenant, tail.last, prefix),
      client.digest(targetUrl, tenant, tail.last, prefix),
    ]);
    if (a.digest !== b.digest || a.rows !== b.rows)
      throw new MoveError(
        `digests differ from tseq ${prefix} to ${tail.last}: source ${a.rows} rows ${a.digest}, target ${b.rows} rows ${b.digest}`,
      );
    log(`  digests equal from tseq ${prefix} to ${tail.last}: ${a.rows} rows, ${a.digest}`);

    const moved: PlacementRecord = { server: to, epoch: epoch + 1, state: 'active' };
    const commitTx = await etcd
      .if(placementKey, 'Mod', '==', frozen.mod)
      .and(held.key, 'Mod', '==', held.mod)
      .then(etcd.put(placementKey).value(JSON.stringify(moved)))
      .commit();
    if (!commitTx.succeeded) throw new MoveError(`the frozen placement of ${tenant} changed under the move (or this mover lost its lock)`);
    committed = true;
    const commitRevision = Number(commitTx.header.revision);
    const committedAt = performance.now();
    const frozenMs = committedAt - frozenAt;
    log(`  placed on ${to} at epoch ${epoch + 1}; writes were frozen for ${seconds(frozenMs)} s`);

    // Not part of the move any more: how soon the target serves it, and the source's copy dropped.
    let targetSawMs: number | null = null;
    const watchDeadline = performance.now() + 10_000;
    while (performance.now() < watchDeadline) {
      const view = await cleaner.view(targetUrl, tenant).catch(() => null);
      if (view && view.revision >= commitRevision && view.placement?.server === to) {
        targetSawMs = performance.now() - committedAt;
        break;
      }
      await sleep(10);
    }
    log(
      targetSawMs === null
        ? `  ${to} has not reported the new placement within 10 s`
        : `  ${to} serves ${tenant} after ${targetSawMs.toFixed(0)} ms`,
    );
    let sourceCopy: MoveResult['sourceCopy'] = { state: 'kept', rows: 0 };
    if (!opts.keepSource) {
      const dropDeadline = performance.now() + 10_000;
      for (;;) {
        try {
          // 409 until the source has seen that it no longer serves the tenant. A large copy is not waited
          // for: the source goes on deleting it in parts (refusing the tenant meanwhile), restarts included.
          const dropped = await cleaner.drop(sourceUrl, tenant, 5_000);
          sourceCopy = { state: dropped.done ? 'deleted' : 'deleting', rows: dropped.deleted };
          log(
            dropped.done
              ? `  dropped the copy on ${from} (${dropped.deleted} rows)`
              : `  the copy on ${from} is being deleted there (${dropped.deleted} rows so far); DELETE /admin/tenants/${tenant} on ${from} answers how far`,
          );
          break;
        } catch (error) {
          if (performance.now() > dropDeadline) {
            log(`  the copy on ${from} was kept: ${(error as Error).message}; memory-ledger move --abort ${tenant} removes it`);
            break;
          }
          await sleep(100);
        }
      }
    }
    const result: MoveResult = {
      tenant,
      from,
      to,
      epoch: epoch + 1,
      rows: pa.rows + a.rows,
      bulkRows,
      bulkSeconds,
      rounds,
      exportSeconds: exportMs / 1000,
      importSeconds: importMs / 1000,
      tailRows: tail.rows,
      frozenMs,
      quiesceMs: quiesced,
      digest: `${pa.digest} ${a.digest}`,
      targetSawMs,
      sourceCopy,
      totalSeconds: (performance.now() - started) / 1000,
    };
    log(
      `moved ${tenant} to ${to} in ${result.totalSeconds.toFixed(2)} s: ${result.rows} rows (export ${result.exportSeconds.toFixed(2)} s, import ${result.importSeconds.toFixed(2)} s), frozen ${seconds(frozenMs)} s`,
    );
    return result;
  } finally {
    if (!committed) await undo();
    await held.release();
  }

  async function undo(): Promise<void> {
    if (frozen !== null) {
      const ok = await thaw(etcd, tenant, frozen).catch((error: unknown) => {
        log(`  could not unfreeze ${tenant}: ${(error as Error).message}`);
        return false;
      });
      log(
        ok
          ? `  move abandoned: ${tenant} unfrozen on ${frozen.record.server} at epoch ${frozen.record.epoch}`
          : `  move abandoned, but ${tenant} is still frozen: run memory-ledger move --abort ${tenant}`,
      );
    }
    if (!copyStarted || targetUrl === undefined) return;
    try {
      await cleaner.dropAll(targetUrl, tenant);
      log(`  dropped the partial copy on ${to}`);
    } catch (error) {
      log(`  the partial copy on ${to} is left (${(error as Error).message}): run memory-ledger move --abort ${tenant}`);
    }
  }
}
