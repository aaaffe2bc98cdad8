// The one failure a local process reports about its data folder: someone else has it and we cannot share
// it (another version, a program outside the holder protocol, a permission problem). It is printed as one
// line naming the folder and the holder, never as an engine stack trace.
export class FolderHeldError extends Error {
  constructor(
    readonly dataDir: string,
    what: string,
  ) {
    super(`memory-ledger: ${dataDir}: ${what}`);
    this.name = 'FolderHeldError';
  }
}

/** Kuzu's own refusal when another process has the database open: `Could not set lock on file`. */
export function isEngineLockError(error: unknown): boolean {
  return error instanceof Error && /could not set lock on file/i.test(error.message);
}

export function isPermissionError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}
