// The issue of a field a request does not take, with the nearest field it may have meant; apart from
// the operations so the HTTP threads (server/fronts/) refuse a stray query parameter without loading them.
import type { FieldIssue } from './errors.ts';

/** Edit distance counting a swap of two neighbours as one edit (`spcae` is one slip from `space`). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The `extra_forbidden` issue of an unknown key at `path`; `known` (the fields allowed there) lets the
 * message name the one a typo was meant to be (`spcae` -> `space`).
 */
export function unknownFieldIssue(key: string, path: (string | number)[], known: readonly string[] = []): FieldIssue {
  const near = known
    .map((k) => ({ k, d: distance(key.toLowerCase(), k.toLowerCase()) }))
    .filter(({ k, d }) => d <= 2 && d * 2 < k.length)
    .sort((a, b) => a.d - b.d)[0];
  const hint = near ? `did you mean "${near.k}"?` : known.length > 0 ? `the fields here are ${known.join(', ')}` : 'check its spelling';
  return {
    type: 'extra_forbidden',
    loc: [...path, key],
    msg: `unknown field "${key}": it is not part of this request; ${hint}`,
    input: null,
  };
}
