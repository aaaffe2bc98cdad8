// Word splitting shared by the local embedder and query handling: Unicode letters and digits only, so a
// query in any script and with any punctuation becomes plain words (nothing reaches a query parser).
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;
// The same rule for ASCII text, where a plain character class is several times faster.
const ASCII_WORD = /[a-z0-9]+(?:'[a-z]+)?/g;

const ASCII = /^[\x00-\x7f]*$/;

export function words(text: string): string[] {
  const ascii = ASCII.test(text);
  const plain = ascii ? text.toLowerCase() : text.normalize('NFKC').toLowerCase();
  const found = plain.match(ascii ? ASCII_WORD : WORD) ?? [];
  for (let i = 0; i < found.length; i++) {
    const w = found[i] ?? '';
    if (w.includes("'") || w.includes('’')) found[i] = w.replace(/['’]s$/, '').replace(/['’]/g, '');
  }
  return found;
}

/** A light suffix stripper: enough that "painted", "painting" and "paints" share a feature. */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 97 || c > 122) return word;
  }
  // No suffix stripSuffix removes ends otherwise: most words return here without nine endsWith calls (the local
  // embedder stems every content word of every indexed row).
  const last = word.charCodeAt(word.length - 1);
  if (last !== 115 && last !== 100 && last !== 103 && last !== 121 && last !== 108 && last !== 110) return word; // s d g y l n
  return stripSuffix(word);
}

/** The first of the suffixes below that `word` (lower-case ASCII, over four letters) ends with, removed. */
export function stripSuffix(word: string): string {
  for (const suffix of ['ational', 'ization', 'ing', 'edly', 'ed', 'ies', 'ly', 'es', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      const base = word.slice(0, -suffix.length);
      if (suffix === 'ies') return `${base}y`;
      if (suffix === 's' && base.endsWith('s')) return word;
      return base.length > 3 && base.at(-1) === base.at(-2) ? base.slice(0, -1) : base;
    }
  }
  return word;
}

// Common English function words: they carry no topic and dominate hashed vectors of short texts.
export const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her hers him his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to too was we were what when where ' +
    'which who whom why will with would you your yours just also about any all some very really am oh yeah wow'
  ).split(' '),
);

/** Words of a query worth matching: stop words out, unless nothing else is left. */
export function contentWords(text: string): string[] {
  const all = words(text);
  const kept = all.filter((w) => !STOP_WORDS.has(w));
  return kept.length > 0 ? kept : all;
}
