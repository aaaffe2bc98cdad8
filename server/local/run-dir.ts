// What a holder leaves in the data folder for the other local processes: `local/holder.json` (who holds
// the folder and where it answers) and, when it answers on loopback, `local/token`. The `local` folder is
// owner-only (0700), so the unix socket inside it and the token are out of reach of other users.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Bumped when the way processes talk to a holder changes; a record of another protocol is incompatible. */
export const HOLDER_PROTOCOL = 1;

export interface HolderRecord {
  protocol: number;
  pid: number;
  version: string;
  /** The command the holder runs: `stdio` or `serve`. */
  kind: string;
  started_at: string;
  /** False while the holder opens the ledger (it has the lock but no door yet). */
  ready: boolean;
  /** A unix socket path, or null when the holder answers on loopback (`port`) with the token file. */
  socket: string | null;
  port: number | null;
}

/** sun_path holds 108 bytes with the terminating NUL; a longer socket path cannot be bound. */
const SUN_PATH_MAX = 107;

export const runDir = (dataDir: string): string => join(dataDir, 'local');
const recordPath = (dataDir: string): string => join(runDir(dataDir), 'holder.json');
const tokenPath = (dataDir: string): string => join(runDir(dataDir), 'token');

export function ensureRunDir(dataDir: string): string {
  const dir = runDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing folder's mode alone, and the umask may have loosened a new one's.
  chmodSync(dir, 0o700);
  return dir;
}

/** The socket path for this folder, or null when it is too long for a unix socket (then: loopback). */
export function socketPathFor(dataDir: string): string | null {
  const path = join(runDir(dataDir), 'holder.sock');
  return Buffer.byteLength(path) <= SUN_PATH_MAX ? path : null;
}

export function readRecord(dataDir: string): HolderRecord | null {
  try {
    const parsed = JSON.parse(readFileSync(recordPath(dataDir), 'utf8')) as Partial<HolderRecord>;
    if (typeof parsed.pid !== 'number' || typeof parsed.version !== 'string') return null;
    return {
      protocol: typeof parsed.protocol === 'number' ? parsed.protocol : 0,
      pid: parsed.pid,
      version: parsed.version,
      kind: typeof parsed.kind === 'string' ? parsed.kind : 'unknown',
      started_at: typeof parsed.started_at === 'string' ? parsed.started_at : '',
      ready: parsed.ready !== false,
      socket: typeof parsed.socket === 'string' ? parsed.socket : null,
      port: typeof parsed.port === 'number' ? parsed.port : null,
    };
  } catch {
    return null;
  }
}

/** Written whole (temporary file, then rename) so a reader never sees half a record. */
export function writeRecord(dataDir: string, record: HolderRecord): void {
  const tmp = `${recordPath(dataDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  renameSync(tmp, recordPath(dataDir));
}

/** Removes the record only if it is still ours (a successor may already have written its own). */
export function removeRecord(dataDir: string, pid: number): void {
  if (readRecord(dataDir)?.pid === pid) rmSync(recordPath(dataDir), { force: true });
}

export function newToken(dataDir: string): string {
  const token = randomBytes(24).toString('hex');
  const tmp = `${tokenPath(dataDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, token, { mode: 0o600 });
  renameSync(tmp, tokenPath(dataDir));
  return token;
}

export function readToken(dataDir: string): string | null {
  try {
    return readFileSync(tokenPath(dataDir), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
