// A local process's hold on the data folder: either it is the HOLDER (it took the folder's lock, opened
// the ledger and answers the others on its door) or a FORWARDER (it sends every request to the holder).
// When the holder goes (killed, or stopping), a forwarder's next request fails to connect; the forwarder
// then takes the lock (one process wins; the rest find the winner's record) and the request is sent
// again: writes are idempotent by content, so resending one that was never acknowledged is safe.
import { Ledger } from '../../storage/log/ledger.ts';
import type { Config } from '../config.ts';
import type { StartedServices } from '../services.ts';
import { SERVICE_VERSION } from '../version.ts';
import { FolderHeldError, isEngineLockError, isPermissionError } from './folder-held.ts';
import { HolderClient, HolderGoneError, type Envelope } from './holder-client.ts';
import type { Held, HolderDoor } from './holder-door.ts';
import { tryLock, type FolderLock } from './lock.ts';
import { ensureRunDir, HOLDER_PROTOCOL, pidAlive, readRecord, readToken, removeRecord, writeRecord, type HolderRecord } from './run-dir.ts';

/** How long to wait for a lock holder that says nothing (no record, or a door that does not answer). */
const WAIT_FOR_HOLDER_MS = 30_000;
/** A holder that says it is opening the ledger (a large ledger loads for a while) is waited for longer. */
const WAIT_FOR_OPENING_MS = 10 * 60_000;
/** Attempts for one request across takeovers (each takeover has its own wait). */
const MAX_ATTEMPTS = 5;

export interface Holding {
  held: Held;
  door: HolderDoor;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const NULL_BODY = new Set([101, 204, 205, 304]);
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

const describe = (r: HolderRecord): string => `memory-ledger ${r.version} (pid ${r.pid}, ${r.kind})`;

export class LocalLink {
  #holding: (Holding & { lock: FolderLock }) | null = null;
  #remote: HolderClient | null = null;
  #acquiring: Promise<void> | null = null;
  #stopping = false;

  private constructor(
    readonly config: Config,
    readonly kind: string,
    readonly log: (m: string) => void,
  ) {}

  /** Holds the folder or finds its holder; throws FolderHeldError when neither can be arranged. */
  static async open(config: Config, kind: string, log: (m: string) => void): Promise<LocalLink> {
    const link = new LocalLink(config, kind, log);
    await link.#acquire();
    return link;
  }

  get holding(): Holding | null {
    return this.#holding;
  }

  /** Who answers: `holder` or `forwarder to pid N`. */
  get role(): string {
    return this.#holding ? 'holder' : `forwarder to pid ${this.#remote?.record.pid ?? '?'}`;
  }

  /**
   * Answers in-process (`local`) when holding, else through the holder (`remote`); when the holder is
   * gone, takes over or finds its successor and tries again.
   */
  async answer<T>(remote: (holder: HolderClient) => Promise<T>, local: (h: Holding) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (this.#holding) return local(this.#holding);
      const holder = this.#remote;
      if (holder) {
        try {
          return await remote(holder);
        } catch (error) {
          if (!(error instanceof HolderGoneError) || attempt >= MAX_ATTEMPTS || this.#stopping) throw error;
        }
      }
      await this.#takeOver(holder);
    }
  }

  /** `answer` for an HTTP request: the holder's answer as a Response. */
  fetch(envelope: Envelope, local: (h: Holding) => Promise<Response>): Promise<Response> {
    return this.answer(async (holder) => {
      const a = await holder.send(envelope);
      const headers = new Headers();
      for (const [k, v] of Object.entries(a.headers))
        if (v !== undefined && !HOP_BY_HOP.has(k)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      return new Response(NULL_BODY.has(a.status) ? null : a.body, { status: a.status, headers });
    }, local);
  }

  async #takeOver(failed: HolderClient | null): Promise<void> {
    if (!this.#acquiring && this.#remote === failed && !this.#holding) {
      failed?.close();
      this.#remote = null;
      this.log(`the holder of ${this.config.dataDir} is gone: taking over or finding its successor`);
      this.#acquiring = this.#acquire().finally(() => {
        this.#acquiring = null;
      });
    }
    await this.#acquiring;
  }

  async #acquire(): Promise<void> {
    const { dataDir } = this.config;
    const began = Date.now();
    try {
      ensureRunDir(dataDir);
    } catch (error) {
      if (isPermissionError(error)) throw new FolderHeldError(dataDir, `cannot use the folder: ${(error as Error).message}`);
      throw error;
    }
    for (;;) {
      const lock = await tryLock(dataDir);
      if (lock) return this.#hold(lock);
      const record = readRecord(dataDir);
      const live = record && record.pid !== process.pid && pidAlive(record.pid) ? record : null;
      if (live && (live.protocol !== HOLDER_PROTOCOL || live.version !== SERVICE_VERSION)) {
        throw new FolderHeldError(
          dataDir,
          `held by ${describe(live)}, which this memory-ledger ${SERVICE_VERSION} cannot share; stop it or run the same version`,
        );
      }
      if (live && !live.ready) {
        if (Date.now() - began > WAIT_FOR_OPENING_MS)
          throw new FolderHeldError(
            dataDir,
            `held by ${describe(live)}, which has been opening the ledger for ${Math.round((Date.now() - began) / 1000)} s`,
          );
        await sleep(100);
        continue;
      }
      if (live) {
        const client = new HolderClient(live, live.socket ? null : readToken(dataDir));
        if ((await client.probe()) === SERVICE_VERSION) {
          this.#remote = client;
          this.log(`memory-ledger ${SERVICE_VERSION} forwarding to the holder of ${dataDir}: ${describe(live)}`);
          return;
        }
        client.close();
      }
      if (Date.now() - began > WAIT_FOR_HOLDER_MS) {
        throw new FolderHeldError(
          dataDir,
          live
            ? `held by ${describe(live)}, which does not answer`
            : 'held by a process that left no holder record (another program, or one still starting)',
        );
      }
      await sleep(100);
    }
  }

  async #hold(lock: FolderLock): Promise<void> {
    const { config } = this;
    const record = {
      protocol: HOLDER_PROTOCOL,
      pid: process.pid,
      version: SERVICE_VERSION,
      kind: this.kind,
      started_at: new Date().toISOString(),
    };
    // Said at once, so processes arriving while the ledger loads know whom they wait for.
    writeRecord(config.dataDir, { ...record, ready: false, socket: null, port: null });
    let ledger: Ledger;
    // Where a start's time went, said in the line below: a slow start is told apart from a slow disk.
    const t0 = performance.now();
    const took: { store?: number; services?: number } = {};
    const opening = Ledger.open(config.dataDir);
    opening.then(() => (took.store = performance.now() - t0)).catch(() => undefined);
    // The engine opens on Kuzu's threads (~1 s of wall time, little of this thread's): the code of the
    // services and of the app behind the door (~1 s of this thread's CPU: the MCP SDK, the tools' schemas,
    // LanceDB) is loaded meanwhile, not before, and the search index, embedder and word vectors load too.
    const door = import('./holder-door.ts');
    door.catch(() => undefined); // met below, after the store's
    const starting: Promise<StartedServices> = import('../services.ts').then((s) => s.startServices(config, opening));
    starting.then(() => (took.services = performance.now() - t0)).catch(() => undefined); // its failure is met below, after the store's
    try {
      ledger = await opening;
    } catch (error) {
      await starting.catch(() => undefined);
      removeRecord(config.dataDir, process.pid);
      await lock.release();
      if (isEngineLockError(error))
        throw new FolderHeldError(
          config.dataDir,
          'the graph store is locked by a process outside the holder protocol (an older memory-ledger or another Kuzu program)',
        );
      if (isPermissionError(error)) throw new FolderHeldError(config.dataDir, `cannot open the ledger: ${(error as Error).message}`);
      throw error;
    }
    const started = await starting;
    const { openHolderDoor } = await door;
    const opened = await openHolderDoor({ config, ledger, started });
    writeRecord(config.dataDir, { ...record, ready: true, socket: opened.socket, port: opened.port });
    this.#holding = { held: { config, ledger, started }, door: opened, lock };
    const ms = (t: number | undefined): string => `${Math.round(t ?? 0)} ms`;
    this.log(
      `memory-ledger ${SERVICE_VERSION} holds ${config.dataDir} (other local processes reach it on ${opened.socket ?? `127.0.0.1:${opened.port} with the token`}); ` +
        `ready ${ms(performance.now())} after the process started: the store opened in ${ms(took.store)}, the search index and services in ${ms(took.services)}, both from ${ms(t0)}`,
    );
  }

  /** Hands the folder over: the door closes, queued writes commit, the stores close, the lock goes. */
  async close(): Promise<void> {
    this.#stopping = true;
    await this.#acquiring?.catch(() => undefined);
    this.#remote?.close();
    const h = this.#holding;
    if (!h) return;
    await h.door.close();
    removeRecord(this.config.dataDir, process.pid);
    await h.held.started.close();
    await h.held.ledger.close();
    await h.lock.release();
  }
}

/**
 * Stops the process once (SIGTERM, SIGINT, or the caller's reason): the caller's door first, then the
 * link (a holder hands over), with a hard stop after 15 s. Returns the stop function.
 */
export function stopOnSignals(link: LocalLink, closeDoor: () => Promise<void> | void): (why: string) => Promise<void> {
  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    link.log(`${why}: closing`);
    const hardStop = setTimeout(() => process.exit(1), 15_000);
    hardStop.unref();
    await closeDoor();
    await link.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return stop;
}
