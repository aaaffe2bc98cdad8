// Work the server runs in a child process of its own (a large table's index maintenance, the graph store's
// recovery after an unclean stop): the child module beside its caller, run as the caller runs (a source
// checkout through tsx, dist/ as JavaScript), its stderr's end kept for the failure it explains.
import { fork, type ChildProcess } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The end of the child's stderr kept: the engine's message, not its whole log. */
const KEPT_STDERR = 4096;

/** How the child ended, with the end of what it wrote to stderr. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * The module `name` (without extension) beside `callerUrl` (the caller's `import.meta.url`), in the
 * caller's own form: `.ts` in a source checkout, `.js` in dist/.
 */
export function besideCaller(callerUrl: string, name: string): string {
  return fileURLToPath(new URL(`./${name}${extname(fileURLToPath(callerUrl))}`, callerUrl));
}

/**
 * Forks `module` with `args`: `exited` resolves once the child ended and its channel drained ('close', so
 * messages sent before exiting are in), and rejects when it could not be started.
 */
export function forkApart(
  module: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { child: ChildProcess; exited: Promise<ChildExit> } {
  // A source checkout runs TypeScript: the child loads tsx, as the server did (bin/memory-ledger.mjs).
  const execArgv = module.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
  const child = fork(module, [...args], { execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-KEPT_STDERR);
  });
  const exited = new Promise<ChildExit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  return { child, exited };
}
