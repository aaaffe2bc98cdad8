// A whole-number setting (a size in megabytes, a count of rows), read from the environment the same way
// for every engine budget and bound.

/**
 * `env[name]` as a whole number of `unit` (at least `min`), or `fallback` when unset or empty; a bad value
 * throws naming the variable.
 */
export function envWholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, unit: string): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}: expected a whole number of ${unit}, at least ${min}, got "${raw}"`);
  return n;
}

/** `env[name]` as whole megabytes (at least `min`), or `fallback` when unset. */
export function envMegabytes(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  return envWholeNumber(env, name, fallback, min, 'megabytes');
}
