// A vector (HNSW) index is built in a child process. LanceDB holds the whole column while it builds (~1.5
// KB a 384-dimension row, a 4.8 GB peak over 2.4M rows: docs/storage.md), and in the server that peak
// would be the server's: past any budget of ours, kept in part by the C allocator afterwards, and fatal
// under a container's memory limit. In a child it ends with the child, which a memory limit may kill
// without the server: the build is then tried again at the table's next maintenance. LanceDB commits the
// index beside the server's appends (an index over the fragments it read; later appends stay unindexed
// until an optimize), and the server's handle then reads the table's latest version.
import { fork, type ChildProcess } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the child builds: one column's index of one table, with the server's options. */
export interface VectorBuild {
  dir: string;
  table: string;
  column: string;
  numPartitions: number;
  efConstruction: number;
}

/** The end of the child's stderr kept for the error: LanceDB's message, not its whole log. */
const KEPT_STDERR = 4096;

export class VectorBuilds {
  /** The builds in flight, by table. */
  readonly #running = new Map<ChildProcess, string>();

  /** Builds the index in a child; resolves once it is committed, rejects with the child's failure. */
  build(build: VectorBuild): Promise<void> {
    const entry = new URL(`./vector-build-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
    // A source checkout runs TypeScript: the child loads tsx, as the server did (bin/memory-ledger.mjs).
    const execArgv = entry.pathname.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
    const child = fork(fileURLToPath(entry), [JSON.stringify(build)], { execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.#running.set(child, build.table);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-KEPT_STDERR);
    });
    return new Promise((resolve, reject) => {
      child.once('error', (error) => {
        this.#running.delete(child);
        reject(error);
      });
      child.once('exit', (code, signal) => {
        this.#running.delete(child);
        if (code === 0) resolve();
        else
          reject(
            new Error(
              `the ${build.column} index of ${build.table} was not built: its process ${signal ? `was ended by ${signal}` : `exited with ${code}`}` +
                (stderr.trim() ? `: ${stderr.trim()}` : '') +
                '; its rows are searched without it until the next maintenance builds it',
            ),
          );
      });
    });
  }

  /**
   * Ends the builds in flight, of one table or all (a drop, a close): an index not yet committed is built
   * again by a later maintenance, after a restart too.
   */
  async end(table?: string): Promise<void> {
    const ending = [...this.#running].filter(([, t]) => table === undefined || t === table).map(([child]) => child);
    const ended = ending.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of ending) child.kill('SIGKILL');
    await Promise.all(ended);
  }
}
