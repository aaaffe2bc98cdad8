// The embedder port: text in, unit vectors out. The index records `id` and `dimension`; a server started
// with a different embedder re-embeds every row rather than compare vectors from two models.
export interface Embedder {
  /** `local`, or `openai:<model>`. */
  readonly id: string;
  /** Vector length; known after `ready()`. */
  dimension(): number;
  /** Resolves once the dimension is known (a remote model is asked for one probe vector). */
  ready(): Promise<void>;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
export function normalise(v: Float32Array): Float32Array {
  const n = v.length;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = v[i]!;
    sum += x * x;
  }
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < n; i++) v[i] = v[i]! * inv;
  }
  return v;
}
