// The C library's allocator, as a server process runs it on Linux with glibc. LanceDB's and Kuzu's threads
// allocate through it, and with glibc's defaults (up to eight arenas a core; a threshold for blocks mapped
// on their own that rises to 32 MB as large blocks are freed) what they free stays resident: after a fill
// of 3M rows the server held ~1 GB in thread arenas at rest (docs/storage.md). glibc reads its settings
// once, when the process starts, so a server started without them starts itself again at once with them:
// `process.execve`, the same process id and standard streams, before anything is opened or read.
// Settings given around the process (the container image sets both) are kept as given; SVC_ALLOCATOR=system
// keeps glibc's defaults.

/** What the server runs with unless told otherwise (the container image sets the same). */
export const ALLOCATOR_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

export interface ProcessFacts {
  platform: NodeJS.Platform;
  /** Whether the C library is glibc (musl and others read neither setting); asked only when nothing else decides. */
  glibc: () => boolean;
  /** `process.execve` exists (Node 22.15 and later, 23.11 and later). */
  canExec: boolean;
}

/** The environment to start again with, or null to go on as started. Throws on an SVC_ALLOCATOR it does not know. */
export function allocatorEnv(env: NodeJS.ProcessEnv, facts: ProcessFacts): NodeJS.ProcessEnv | null {
  const mode = env.SVC_ALLOCATOR?.trim() || 'tuned';
  if (mode !== 'tuned' && mode !== 'system') {
    // Named as config.ts's errors are, so the command prints it as one (importing config.ts would load the engines).
    const error = new Error(`SVC_ALLOCATOR: expected "tuned" (the default) or "system" (glibc's own settings), got "${env.SVC_ALLOCATOR}"`);
    error.name = 'ConfigError';
    throw error;
  }
  if (mode === 'system' || facts.platform !== 'linux' || !facts.canExec) return null;
  // Either one given around the process means its caller chose: nothing is added to or overridden. So it
  // is in the process started again, which then reads no diagnostic report (~2–3 ms) to learn its C library.
  if (Object.keys(ALLOCATOR_ENV).some((name) => env[name] !== undefined)) return null;
  return facts.glibc() ? { ...env, ...ALLOCATOR_ENV } : null;
}

/** Whether the C library this process runs on is glibc (its version in Node's diagnostic report header). */
export function isGlibc(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: unknown } } | undefined;
  return typeof report?.header?.glibcVersionRuntime === 'string';
}

/** Starts this process again with the allocator's settings when allocatorEnv asks for it; returns otherwise. */
export function startWithAllocator(): void {
  const execve = process.execve?.bind(process);
  const next = allocatorEnv(process.env, {
    platform: process.platform,
    glibc: isGlibc,
    canExec: !!execve,
  });
  if (next && execve) execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], next);
}
