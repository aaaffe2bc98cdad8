// Who may open the ledger: one process per data folder, decided by a lock the kernel releases when its
// owner dies (SIGKILL included), so a takeover never has to guess whether a holder is stale. Kuzu has such
// a lock too, but it cannot be the arbiter: its Database opens lazily, so `Ledger.open` reaches the
// folder (clearing the graph's staging files) before Kuzu refuses, which would disturb a live holder.
//
// On Linux the lock is a listening socket in the abstract namespace, named after the folder's real path:
// binding it is atomic and exclusive and the name vanishes with its process. It carries no data: whoever
// connects is dropped. Elsewhere it is `local/lock` created with O_EXCL holding our pid; a lock whose pid
// is dead is broken (two processes breaking the same stale lock at once is a narrow race left there).
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, realpathSync, rmSync, writeSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { pidAlive, runDir } from './run-dir.ts';

export interface FolderLock {
  release(): Promise<void>;
}

/** The abstract socket name for a folder (exported so tests can play an incompatible holder). */
export function lockName(dataDir: string): string {
  const digest = createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 32);
  return `\0memory-ledger/${digest}`;
}

async function abstractLock(dataDir: string): Promise<FolderLock | null> {
  const server: Server = createServer((socket) => socket.destroy());
  const bound = await new Promise<boolean>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    server.listen(lockName(dataDir), () => resolve(true));
  });
  if (!bound) return null;
  // The lock must not keep a process alive that has nothing else to do.
  server.unref();
  return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function fileLock(dataDir: string): FolderLock | null {
  const path = join(runDir(dataDir), 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return { release: async () => rmSync(path, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let owner = 0;
      try {
        owner = Number(readFileSync(path, 'utf8').trim());
      } catch {
        continue; // released between our open and our read: try again
      }
      if (Number.isInteger(owner) && owner > 0 && pidAlive(owner)) return null;
      rmSync(path, { force: true });
    }
  }
  return null;
}

/** Takes the folder's lock if nobody holds it; null when another process does. */
export async function tryLock(dataDir: string): Promise<FolderLock | null> {
  return process.platform === 'linux' ? abstractLock(dataDir) : fileLock(dataDir);
}
