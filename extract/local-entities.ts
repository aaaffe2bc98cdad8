// Entities the offline extractor finds: runs of capitalised words ("Acme Power", "Bank of England"),
// acronyms, and any name the space already knows, matched case-insensitively on word boundaries.

// Capitalised words that are not names on their own (sentence openers, pronouns, calendar words).
const NOT_NAMES = new Set(
  (
    "a an the i i'm i've i'll i'd in on at of to for from by with and but or so if when while this that these those it its he she we " +
    'they you my our your his her their there here what who why how where which yes no not oh ok okay hi hey hello thanks thank ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september ' +
    'october november december today tomorrow yesterday mr mrs ms dr also after before because however although then as ' +
    'some many most all any each every one two three first last next just well wow great good sure maybe let please ' +
    'later now still yet even only both since until during over under about like meanwhile anyway actually really ' +
    'other another such nothing everything something anything everyone someone nobody lol haha omg btw ' +
    'do does did is are was were be been have has had can could will would should might must shall'
  ).split(' '),
);
const CONNECTORS = new Set(['of', 'de', 'la', 'le', 'van', 'von', 'der', 'du', 'da', 'del', 'for', '&']);
const TOKEN = /[\p{L}\p{N}][\p{L}\p{N}'’&.-]*/gu;

interface Token {
  text: string;
  start: number;
  end: number;
}

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const raw = m[0].replace(/[.’'-]+$/u, '');
    out.push({ text: raw, start: m.index, end: m.index + raw.length });
  }
  return out;
}

const capitalised = (t: string): boolean => /^\p{Lu}/u.test(t);
const acronym = (t: string): boolean => /^\p{Lu}[\p{Lu}\p{N}&]+$/u.test(t) && t.length >= 2 && t.length <= 8;
const possessive = (t: string): string => t.replace(/['’]s$/u, '');

/** The comparable form of a name: lower case, no leading article or possessive, single spaces. */
export function normaliseName(name: string): string {
  return possessive(name.trim())
    .toLowerCase()
    .replace(/^the\s+/, '')
    .replace(/\s+/g, ' ');
}

function sentenceInitial(text: string, start: number): boolean {
  const before = text.slice(0, start).trimEnd();
  return before.length === 0 || /[.!?:;"“(\n]$/u.test(before);
}

export function findEntities(text: string, known: ReadonlySet<string>): string[] {
  const tokens = tokenize(text);
  const names = new Map<string, string>();
  const add = (name: string): void => {
    const key = normaliseName(name);
    if (key.length >= 2 && !NOT_NAMES.has(key) && !names.has(key)) names.set(key, possessive(name.trim()));
  };
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i];
    if (!t || !capitalised(t.text) || NOT_NAMES.has(t.text.toLowerCase())) {
      i++;
      continue;
    }
    // Grow a run of capitalised words joined only by spaces (and lower-case connectors inside).
    let j = i;
    while (j + 1 < tokens.length) {
      const cur = tokens[j]!;
      const next = tokens[j + 1]!;
      const gap = text.slice(cur.end, next.start);
      if (!/^\s+$/u.test(gap) || /['’]s$/u.test(cur.text)) break;
      if (capitalised(next.text) && !NOT_NAMES.has(next.text.toLowerCase())) {
        j++;
        continue;
      }
      const after = tokens[j + 2];
      if (CONNECTORS.has(next.text.toLowerCase()) && after && capitalised(after.text) && /^\s+$/u.test(text.slice(next.end, after.start))) {
        j += 2;
        continue;
      }
      break;
    }
    const run = tokens.slice(i, j + 1);
    const phrase = text.slice(run[0]!.start, run[run.length - 1]!.end);
    // A lone capitalised word opening a sentence is a name only when it labels a speaker ("Dana: ...").
    const speaker = run.length === 1 && /^\s*:/u.test(text.slice(t.end, t.end + 3));
    if (run.length > 1 || acronym(t.text) || speaker || !sentenceInitial(text, t.start)) add(phrase);
    i = j + 1;
  }
  if (known.size > 0) {
    const lower = tokens.map((t) => possessive(t.text).toLowerCase());
    for (let a = 0; a < lower.length; a++) {
      for (let n = 1; n <= 4 && a + n <= lower.length; n++) {
        const gram = lower.slice(a, a + n).join(' ');
        if (known.has(gram)) add(text.slice(tokens[a]!.start, tokens[a + n - 1]!.end));
      }
    }
  }
  return [...names.values()];
}
