// Two 32-bit hashes of a key, from which filters and tables of keys (held-keys.ts, id-places.ts) derive
// where a key goes, worked out once per key.

const SEED_1 = 0x811c9dc5;
const SEED_2 = 0x9747b28c;

/** 32-bit FNV-1a of `prefix` (a code unit, or -1 for none) then the string's UTF-16 code units, from `seed`. */
function fnv(text: string, seed: number, prefix = -1): number {
  let h = seed;
  if (prefix >= 0) h = Math.imul(h ^ prefix, 0x01000193);
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * A key's two hashes, from which its bits in every filter are derived: worked out once per key, not once
 * per slice it is tested against (an absent id is tested against all of them; hashing it again per slice
 * was most of a bulk write's planning lookups once a tenant's filter had grown a few slices).
 */
export interface KeyHashes {
  h1: number;
  h2: number;
}

/** The hashes of `prefix` (a code unit) followed by `text`, into `out` (no string is made for the key). */
export function hashInto(out: KeyHashes, text: string, prefix = -1): KeyHashes {
  out.h1 = fnv(text, SEED_1, prefix);
  // Odd, so the steps a filter takes by it reach every bit; unsigned, as the tables store it.
  out.h2 = (fnv(text, SEED_2, prefix) | 1) >>> 0;
  return out;
}
