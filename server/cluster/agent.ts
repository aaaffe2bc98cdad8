// `memory-ledger placement-agent`: keeps HAProxy's keys.map and spaces.map in step with etcd. One full
// read and an atomic replacement of both maps at start (and after any HAProxy error), then etcd watches
// applied as set/add/del map commands within milliseconds, and a full re-read every few seconds that
// repairs anything a lost watch event or a restarted HAProxy left behind. The map files are rewritten
// too, so HAProxy restarts from the last routes.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3, type IKeyValue, type Watcher } from 'etcd3';
import { replaceMap, runQuiet } from './haproxy-admin.ts';
import { KEYS_PREFIX, PLACEMENT_PREFIX, SPACES_PREFIX } from './placement.ts';
import { mapCommands, mapFileText, proxyMaps, type EtcdView } from './proxy-maps.ts';

export interface AgentOptions {
  etcd: string[];
  /** HAProxy's admin socket. */
  socket: string;
  /** The folder of keys.map and spaces.map, as haproxy.cfg names it (LEDGER_MAPS). */
  maps: string;
  resyncMs?: number;
  log: (line: string) => void;
}

interface Applied {
  keys: Map<string, string>;
  spaces: Map<string, string>;
}

const PREFIXES = { keys: KEYS_PREFIX, placements: PLACEMENT_PREFIX, spaces: SPACES_PREFIX } as const;
type Part = keyof typeof PREFIXES;

export class PlacementAgent {
  readonly #opts: AgentOptions;
  readonly #client: Etcd3;
  readonly #view: { [P in Part]: Map<string, string> } = { keys: new Map(), placements: new Map(), spaces: new Map() };
  #applied: Applied | null = null;
  #watchers: Watcher[] = [];
  #running: Promise<void> | null = null;
  #dirty = false;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  /** Counts applied changes (the cluster test waits on it). */
  updates = 0;

  constructor(opts: AgentOptions) {
    this.#opts = opts;
    this.#client = new Etcd3({
      hosts: opts.etcd,
      dialTimeout: 2_000,
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + 3_000 }),
    });
  }

  get #files(): { keys: string; spaces: string } {
    return { keys: join(this.#opts.maps, 'keys.map'), spaces: join(this.#opts.maps, 'spaces.map') };
  }

  /** Reads etcd fully and brings HAProxy in step; returns the revision read. */
  async sync(): Promise<number> {
    const answers = await Promise.all(
      (Object.keys(PREFIXES) as Part[]).map(async (part) => {
        const res = await this.#client.getAll().prefix(PREFIXES[part]).exec();
        return { part, res };
      }),
    );
    for (const { part, res } of answers) {
      this.#view[part] = new Map(res.kvs.map((kv) => [kv.key.toString('utf8').slice(PREFIXES[part].length), kv.value.toString('utf8')]));
    }
    await this.#schedule();
    return Math.min(...answers.map((a) => Number(a.res.header.revision)));
  }

  /** Runs until close(): a first sync (retried until etcd and HAProxy answer), watches, periodic re-reads. */
  async run(): Promise<void> {
    let revision: number | null = null;
    while (revision === null && !this.#closed) {
      try {
        revision = await this.sync();
      } catch (error) {
        this.#opts.log(`placement-agent: first sync failed (${(error as Error).message}); retrying in 1 s`);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
    if (revision === null) return;
    for (const part of Object.keys(PREFIXES) as Part[]) {
      const w = await this.#client
        .watch()
        .prefix(PREFIXES[part])
        .startRevision(String(revision + 1))
        .create();
      const name = (kv: IKeyValue): string => kv.key.toString('utf8').slice(PREFIXES[part].length);
      w.on('put', (kv) => {
        this.#view[part].set(name(kv), kv.value.toString('utf8'));
        void this.#schedule().catch(() => undefined);
      });
      w.on('delete', (kv) => {
        this.#view[part].delete(name(kv));
        void this.#schedule().catch(() => undefined);
      });
      w.on('error', () => undefined);
      w.on('disconnected', () => undefined);
      this.#watchers.push(w);
    }
    this.#opts.log(`placement-agent: watching etcd from revision ${revision + 1}`);
    const resync = (): void => {
      this.#timer = setTimeout(() => {
        this.sync()
          .catch((error: unknown) =>
            this.#opts.log(`placement-agent: re-read failed (${(error as Error).message}); HAProxy keeps its routes`),
          )
          .finally(() => {
            if (!this.#closed) resync();
          });
      }, this.#opts.resyncMs ?? 5_000);
    };
    resync();
  }

  /** Applies the current view; changes arriving meanwhile are applied right after, coalesced. */
  #schedule(): Promise<void> {
    this.#dirty = true;
    this.#running ??= (async () => {
      try {
        while (this.#dirty && !this.#closed) {
          this.#dirty = false;
          await this.#apply();
        }
      } finally {
        this.#running = null;
      }
    })();
    return this.#running;
  }

  async #apply(): Promise<void> {
    const view: EtcdView = this.#view;
    const next = proxyMaps(view);
    for (const why of next.skipped) this.#opts.log(`placement-agent: skipped ${why}`);
    const files = this.#files;
    const before = this.#applied;
    try {
      if (before === null) {
        await replaceMap(this.#opts.socket, files.keys, next.keys);
        await replaceMap(this.#opts.socket, files.spaces, next.spaces);
      } else {
        const commands = [...mapCommands(files.keys, before.keys, next.keys), ...mapCommands(files.spaces, before.spaces, next.spaces)];
        if (commands.length === 0) return;
        await runQuiet(this.#opts.socket, commands);
      }
    } catch (error) {
      // HAProxy's maps are now unknown: the next apply replaces them whole.
      this.#applied = null;
      this.#opts.log(`placement-agent: ${(error as Error).message}`);
      throw error;
    }
    this.#applied = { keys: next.keys, spaces: next.spaces };
    this.updates++;
    writeAtomically(files.keys, mapFileText(next.keys));
    writeAtomically(files.spaces, mapFileText(next.spaces));
    this.#opts.log(`placement-agent: ${next.keys.size} keys and ${next.spaces.size} spaces routed to placed servers`);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await Promise.allSettled(this.#watchers.map((w) => w.cancel()));
    await this.#running?.catch(() => undefined);
    this.#client.close();
  }
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
