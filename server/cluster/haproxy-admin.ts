// HAProxy's runtime API over its admin socket (`stats socket ... level admin`): one connection per batch
// of commands, joined by ';' as the non-interactive mode allows. A command that succeeds prints nothing;
// anything else it prints is an error.
import { createConnection } from 'node:net';

const TIMEOUT_MS = 5_000;

export class HaproxyError extends Error {}

/** Sends `text` (one line, or a payload ending in an empty line) and returns everything HAProxy answered. */
export function runtimeCommand(socket: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socket);
    let answer = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new HaproxyError(`no answer from HAProxy's admin socket ${socket} within ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => (answer += chunk));
    conn.on('error', (error) => {
      clearTimeout(timer);
      reject(new HaproxyError(`HAProxy's admin socket ${socket}: ${error.message}`));
    });
    conn.on('end', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    conn.end(text.endsWith('\n') ? text : `${text}\n`);
  });
}

/** Runs commands that print nothing on success, a few per connection; throws with HAProxy's own words. */
export async function runQuiet(socket: string, commands: readonly string[], perConnection = 100): Promise<void> {
  for (let i = 0; i < commands.length; i += perConnection) {
    const batch = commands.slice(i, i + perConnection);
    const answer = await runtimeCommand(socket, batch.join('; '));
    const said = answer.trim();
    if (said)
      throw new HaproxyError(`HAProxy refused "${batch[0]}"${batch.length > 1 ? ` (or one of ${batch.length - 1} more)` : ''}: ${said}`);
  }
}

/** Replaces a map's whole content atomically: prepare a version, fill it, commit it. */
export async function replaceMap(socket: string, file: string, entries: ReadonlyMap<string, string>): Promise<void> {
  const prepared = await runtimeCommand(socket, `prepare map ${file}`);
  const version = /New version created:\s*(\d+)/.exec(prepared)?.[1];
  if (version === undefined) throw new HaproxyError(`HAProxy did not prepare a new version of map ${file}: ${prepared.trim()}`);
  const lines = [...entries].map(([k, v]) => `${k} ${v}`);
  for (let i = 0; i < lines.length; i += 1000) {
    const said = (await runtimeCommand(socket, `add map @${version} ${file} <<\n${lines.slice(i, i + 1000).join('\n')}\n\n`)).trim();
    if (said) throw new HaproxyError(`HAProxy refused entries for map ${file}: ${said}`);
  }
  await runQuiet(socket, [`commit map @${version} ${file}`]);
}
