// A size setting in whole megabytes, read from the environment the same way for every engine budget.

/** `env[name]` as whole megabytes (at least `min`), or `fallback` when unset; a bad value throws naming the variable. */
export function envMegabytes(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const mb = Number(raw);
  if (!Number.isInteger(mb) || mb < min) throw new Error(`${name}: expected a whole number of megabytes, at least ${min}, got "${raw}"`);
  return mb;
}
