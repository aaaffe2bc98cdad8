// Ranking mechanisms that can be switched off one by one, to measure what each adds (eval:locomo
// --ablate, which starts the server with SVC_SEARCH_ABLATE=name,name). Every mechanism is on by default.
export const MECHANISMS = [
  'context',
  'neighbours',
  'vectors',
  'time',
  'wordvec',
  'exchange',
  'entities',
  'asking',
  'coverage',
  'related',
  'answer',
] as const;
export type Mechanism = (typeof MECHANISMS)[number];

const off = new Set(
  (process.env.SVC_SEARCH_ABLATE ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);

export function enabled(m: Mechanism): boolean {
  return !off.has(m);
}
