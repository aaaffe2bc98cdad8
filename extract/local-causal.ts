// Splits one sentence on the causal connectives a speaker uses to argue a link ("because", "due to",
// "led to", "so", ...) into clauses, and says which clause is the cause and which the effect. A
// connective under negation ("not because", "did not cause") argues no link. Clauses are split again,
// a few levels deep, so "A because B, which led to C" gives two links.
import { trimEndOf } from './trim.ts';
import type { CausalType } from './types.ts';

export interface Clause {
  text: string;
}

export interface ClauseLink {
  cause: number;
  effect: number;
  type: CausalType;
  mechanism: string;
  confidence: number;
}

export interface CausalSplit {
  clauses: Clause[];
  links: ClauseLink[];
}

type Direction = 'forward' | 'backward';

interface Connective {
  /** Words of the connective, as a regex source without anchors. */
  words: string;
  /** forward: cause, connective, effect ("A led to B"); backward: effect, connective, cause ("A because B"). */
  dir: Direction;
  type: CausalType;
  /** Strong connectives argue causation outright; weak ones mostly do in reporting ("after", "amid"). */
  confidence: number;
  /** The connective's words belong to the cause clause ("demanding better pay", "to protest"). */
  keep?: boolean;
}

/** Longer "sentences" (unpunctuated dumps) are kept whole: no news or chat sentence comes near it. */
const MAX_SENTENCE = 2000;

const STRONG = 0.8;
const MEDIUM = 0.6;
const WEAK = 0.4;

// Verbs after which "in" / "for" name a cause ("killed in the blast", "arrested for looting").
const HARM = 'killed|injured|hurt|wounded|died|dead|damaged|destroyed|lost|stranded|affected|suffered|wounds|casualties';
const BLAME =
  'arrested|charged|booked|detained|jailed|held|punished|sentenced|blamed|criticised|criticized|condemned|fined|suspended|dismissed|sacked|expelled|praised|thanked|apologised|apologized|protested|protesting|protest|strike|agitation|demonstration|rally';
// "love to help", "want to stop": an infinitive completing a verb or adjective states no purpose.
const NOT_COMPLEMENT =
  '(?<!\\b(?:love|loved|like|liked|want|wants|wanted|need|needs|needed|have|has|had|going|gonna|able|try|tries|trying|tried|decided|decide|plan|plans|planned|planning|hope|hoping|hoped|wish|wished|started|start|starts|begin|began|used|way|ways|time|chance|keen|ready|happy|glad|excited|thrilled|hard|easy|important|great|nice|good|nothing|something|anything|how|what|where|whether|helps|helped|ought|supposed|about|learn|learned|learning|agreed|agree|refused|refuse|continue|continued|managed|failed|promised|asked|told|allowed|encouraged|inspired|motivated|invited) )';
const PURPOSE =
  'protest|demand|press|oppose|condemn|mark|express|highlight|seek|voice|register|show|urge|push|prevent|stop|thwart|foil|curb|avert|ensure|avoid|save|support|protect|draw|lodge|denounce|fight|resist|reject|intervene|maintain|control|disperse|contain|restore|keep|pressure|pressurise|pressurize|force|secure|help|solve|end|break|derail|execute|speak|get|enter|step|hail|confront|serve|bring|raise|dethrone|evict|press|free|release|stall|block|gherao|highlight|attract|catch|drive|kill|murder|avenge|retaliate|clear|remove|check|tackle|deal|discuss|resolve|settle|withdraw|pay';

export const CONNECTIVES: readonly Connective[] = [
  {
    words:
      "because of|because|['’]cause|cuz|coz|due to|owing (?:\\w+ )?to|owed (?:\\w+ )?to|on account of|as a (?:direct )?result of|as a consequence of|thanks to|caused by|resulting from|stemming from|arising (?:out )?of|as a result|in the wake of|in view of|attributed to|blamed on",
    dir: 'backward',
    type: 'CAUSES',
    confidence: STRONG,
  },
  {
    words:
      '(?:was|were|is|are|been|being) (?:\\w+ )?(?:triggered|sparked(?: off)?|prompted|set off) by|triggered by|sparked(?: off)? by|prompted by|provoked by',
    dir: 'backward',
    type: 'TRIGGERS',
    confidence: STRONG,
  },
  {
    words: '(?:partly|partially|in part) (?:because of|because|due to)|driven by|fu?elled by|fueled by|helped by',
    dir: 'backward',
    type: 'CONTRIBUTING_FACTOR',
    confidence: STRONG,
  },
  { words: '(?:was|were|is|are) prevented by|blocked by', dir: 'backward', type: 'PREVENTS', confidence: STRONG },
  {
    words:
      'leads? to|led to|leading to|results? in|resulted in(?:to)?|resulting in|results? into|causes|caused|causing|cause|brought about|gave rise to|give rises? to|gives rise to|forced(?! to)|forcing|forces|paralysed|paralyzed|crippled|disrupted|disrupting|affected|affecting|left(?! behind| for| the| to| in| on)|leaving(?! for| the| behind)|created|creating|provoked|spurred',
    dir: 'forward',
    type: 'CAUSES',
    confidence: STRONG,
  },
  { words: 'injuring|killing|wounding|damaging|destroying|hitting|stranding', dir: 'forward', type: 'CAUSES', confidence: STRONG },
  {
    words: `(?<= )(?<=\\b(?:protesting|protested|protest|protests|decrying|condemning|condemned|opposing|opposed|denouncing) )(?!against|over|at|about|on|in|for|outside|near|since|till|until|by|with|from|the (?:city|state|town|streets?)|here|there|and|or|to|\\d)`,
    dir: 'backward',
    type: 'CAUSES',
    confidence: MEDIUM,
  },
  {
    words: '(?=of )(?<=\\b(?:guilty|accused|suspected|convicted|charges|charged)) of',
    dir: 'backward',
    type: 'CAUSES',
    confidence: MEDIUM,
  },
  { words: 'claim(?:ed|s)? the lives of|boosted|costing|hampered|exposed', dir: 'forward', type: 'CAUSES', confidence: STRONG },
  {
    words: 'triggered|triggers|triggering|trigger|sparked(?: off)?|sparks|sparking|set off|sets off|prompted|prompts|prompting',
    dir: 'forward',
    type: 'TRIGGERS',
    confidence: STRONG,
  },
  {
    words: 'contributed to|contributes to|contributing to|contribute to|helped|helps|fu?elled|fueled|fuelling|fueling',
    dir: 'forward',
    type: 'CONTRIBUTING_FACTOR',
    confidence: STRONG,
  },
  { words: 'prevented|prevents|preventing|prevent|averted', dir: 'forward', type: 'PREVENTS', confidence: STRONG },
  {
    words:
      ',? ?(?:and )?therefore|,? ?(?:and )?thus|,? ?(?:and )?hence|,? ?(?:and )?consequently|, which means(?: that)?|, meaning(?: that)?|, so(?! (?:much|many|far|that|long|on|called|too|as|to)\\b)|so(?= (?:i|we|you|he|she|they|it|the|a|an|my|our|his|her|their|this|there|prices?|demand)\\b)|(?<=\\bso \\w+) that',
    dir: 'forward',
    type: 'CAUSES',
    confidence: STRONG,
  },
  {
    words:
      '(?:might have been|may have been|was|were|is|are|be) (?:the )?(?:\\w+ )?(?:reason|cause|trigger|root) (?:behind|for|of)|(?:was|were|is|are) behind',
    dir: 'forward',
    type: 'CAUSES',
    confidence: STRONG,
  },
  {
    words:
      '(?=if )(?<!\\b(?:even|as|what|only) )if|in case|unless|(?<!such |as well |as many |as much |as far |as soon |as long |as good |same )as(?= (?:they|he|she|it|we|i|you|there)\\b| (?:[\\p{L}\\p{N}]+ ){1,4}(?:was|were|is|are|had|has|have|did|could|would|tried|failed|refused|kept|went|came|took|gathered|continued|began|started)\\b)',
    dir: 'backward',
    type: 'CAUSES',
    confidence: MEDIUM,
  },
  {
    words: `(?=in )(?<=\\b(?:${HARM})(?: [\\p{L}\\p{N}]+){0,3} )in(?= the| a| an| that| this| his| her| their| clashes| police| violence| firing| stampede)`,
    dir: 'backward',
    type: 'CAUSES',
    confidence: MEDIUM,
  },
  {
    words: `(?=for |over |about |against )(?<=\\b(?:${BLAME}) )(?:for|over|about|against)`,
    dir: 'backward',
    type: 'CAUSES',
    confidence: MEDIUM,
  },
  {
    words: `(?=in order |to )${NOT_COMPLEMENT}(?:in order )?to (?:${PURPOSE})\\b|in protest(?: against| over| at| of)?|in support of|in solidarity with|in an attempt to|in a bid to|demanding|saying|seeking|alleging|urging|objecting|criticising|criticizing|(?:by|for) (?=(?:allegedly |not |being |illegally )?\\w+ing\\b)|(?<=, )(?!according|including|during|following|regarding|concerning|considering)(?![a-z]+ing,| [a-z]+ing)(?![a-z]+ing (?:or|and)\\b)(?=[a-z]+ing\\b)`,
    dir: 'backward',
    type: 'CAUSES',
    confidence: MEDIUM,
    keep: true,
  },
  {
    words: 'in response to|in reaction to|in retaliation (?:for|against)|over|against|until|till',
    dir: 'backward',
    type: 'CAUSES',
    confidence: WEAK,
  },
  {
    words:
      '(?=after)(?<!\\b(?:look|looks|looked|looking|take|takes|took|named|ask|asked|run|ran|running|go|went|going|chase|chased|come|came|coming|shortly|soon|right|just|long|day|year|week|month|time) )after(?! all\\b)|following|amid|amidst|when|during',
    dir: 'backward',
    type: 'CONTRIBUTING_FACTOR',
    confidence: WEAK,
  },
];

// Opening connectives: "Because B, A" and the like put the cause first, up to a comma.
const OPENERS: readonly (Connective & { re: RegExp })[] = [
  {
    words: '',
    re: /^(?:because of|because|due to|owing to|as a (?:direct )?result of|thanks to|since|given that|in the wake of|in view of|if|in case|unless)\s+/i,
    dir: 'backward',
    type: 'CAUSES',
    confidence: STRONG,
  },
  {
    words: '',
    re: /^(?:after|following|amid|with|when|as|on(?= \w+ing\b))\s+/i,
    dir: 'backward',
    type: 'CONTRIBUTING_FACTOR',
    confidence: WEAK,
  },
  // A participle opening the sentence ("Irked over the arrests, ...", "Boycotting classes, ...") is the cause, word and all.
  {
    words: '',
    re: /^(?=(?:\p{Lu}\p{Ll}+(?:ed|ing)|To \p{Ll}+)\s(?!\s*:))/u,
    dir: 'backward',
    type: 'CAUSES',
    confidence: MEDIUM,
    keep: true,
  },
];

const COMPILED = CONNECTIVES.map((c) => ({
  ...c,
  re: new RegExp(`(?:(?<![\\p{L}\\p{N}])|(?=,))(?:${c.words})(?:(?<![\\p{L}\\p{N}])|(?![\\p{L}\\p{N}]))`, 'giu'),
}));

// A connective under negation ("not because", "did not cause", "never led to") argues no link.
const NEGATED_BEFORE = /(?:\bnot|n['’]t|\bnever|\bno longer|\bhardly)\s+(?:\w+\s+)?$/i;
const tokens = (s: string): number => (s.match(/[\p{L}\p{N}]+/gu) ?? []).length;
// Attribution around a clause ("..., he said") belongs to the sentence, not to the cause.
const TRAILING_ATTRIBUTION =
  /,?\s*(?:["'”’]\s*)?,?\s*(?:[\p{L}.'’-]+\s+){0,5}(?:said|says|added|told [\p{L}]+|reported|according to [^,]+)\s*[.!?]?\s*$/iu;

function stripTrailing(text: string): string {
  return trimEndOf(text.replace(TRAILING_ATTRIBUTION, ''), ' \t\n.!?;:,');
}

interface Match {
  index: number;
  length: number;
  conn: Connective;
}

function candidates(text: string): Match[] {
  const found: Match[] = [];
  for (const c of COMPILED) {
    c.re.lastIndex = 0;
    for (let m = c.re.exec(text); m; m = c.re.exec(text)) {
      found.push({ index: m.index, length: m[0].length, conn: c });
      if (m[0].length === 0) c.re.lastIndex++;
    }
  }
  // Plainly argued connectives first, leftmost first; weak ones only when none is found; among equals
  // the longer phrase ("because of" over "because").
  const tier = (m: Match): number => (m.conn.confidence >= MEDIUM ? 0 : 1);
  return found.sort((a, b) => tier(a) - tier(b) || a.index - b.index || b.length - a.length);
}

const single = (text: string): CausalSplit => ({ clauses: [{ text }], links: [] });

// A relative clause trailing a cause or effect (", which ...", ", while ...") is not part of it.
function splitTail(text: string): { head: string; tail: string | null } {
  const m = /\s*,\s*(?=(?:which|while|where)\b)/i.exec(text);
  if (!m || tokens(text.slice(0, m.index)) < 1) return { head: text, tail: null };
  return { head: text.slice(0, m.index), tail: text.slice(m.index + m[0].length) };
}

// "..., which led to C": the relative pronoun stands for the clause before it.
function tailSplit(antecedent: string, tail: string, depth: number): CausalSplit {
  const rest = /^which\s+/i.exec(tail);
  if (rest) {
    const resolved = splitCausal(`${antecedent} ${tail.slice(rest[0].length)}`, depth - 1, true);
    if (resolved.links.length > 0) return resolved;
  }
  return single(tail);
}

function append(a: CausalSplit, b: CausalSplit): CausalSplit {
  const offset = a.clauses.length;
  return {
    clauses: [...a.clauses, ...b.clauses],
    links: [...a.links, ...b.links.map((l) => ({ ...l, cause: l.cause + offset, effect: l.effect + offset }))],
  };
}

function join(left: CausalSplit, right: CausalSplit, conn: Connective, mechanism: string, leftIsCause: boolean): CausalSplit {
  const offset = left.clauses.length;
  const clauses = [...left.clauses, ...right.clauses];
  const links = [...left.links, ...right.links.map((l) => ({ ...l, cause: l.cause + offset, effect: l.effect + offset }))];
  const near = { left: offset - 1, right: offset };
  links.push({
    cause: leftIsCause ? near.left : near.right,
    effect: leftIsCause ? near.right : near.left,
    type: conn.type,
    mechanism,
    confidence: conn.confidence,
  });
  return { clauses, links };
}

// A short opening adverbial ("On Tuesday,", "However,") and a reporting frame ("He said that") are not
// part of a cause or effect.
const LEADING_ADVERBIAL =
  /^(?:(?:but|and|yet|however|meanwhile|earlier|later|also|now|then|today|yesterday|moreover|furthermore|besides|instead|indeed|overall|in all|on \p{L}+|in \p{L}+|at \p{L}+|last \p{L}+|this \p{L}+)\s*,\s*|(?:but|and|yet|so)\s+)/iu;
const REPORTING =
  /^(?:[\p{L}\p{N}.'’()-]+\s+){1,7}(?:said|says|say|added|claimed|claims|alleged|stated|noted|suspects?|believes?|believed|thinks?|feels?|fears?|feared|argues?|argued|told [\p{L}]+)(?:\s+that)?\s+(?=\p{L})/iu;

export function trimFrame(text: string): string {
  let s = text.trim();
  // A headline or dateline before " : " ("HYDERABAD : ...") is not part of the statement.
  const colon = s.lastIndexOf(' : ');
  if (colon >= 0 && tokens(s.slice(colon + 3)) >= 3) s = s.slice(colon + 3);
  for (let i = 0; i < 2; i++) s = s.replace(LEADING_ADVERBIAL, '');
  const r = REPORTING.exec(s);
  if (r && tokens(s.slice(r[0].length)) >= 2) s = s.slice(r[0].length);
  return s;
}

export function splitCausal(sentence: string, depth = 3, top = true): CausalSplit {
  const text = sentence.trim();
  if (depth <= 0 || tokens(text) < 4 || text.length > MAX_SENTENCE) return single(text);
  const opened = top ? trimFrame(text) : text;
  for (const opener of OPENERS) {
    const m = opener.re.exec(opened);
    const commaAt = m ? /,(?=\s)/.exec(opened.slice(m[0].length)) : null;
    const comma = m && commaAt ? m[0].length + commaAt.index : -1;
    if (!m || comma < 0) continue;
    const cause = opened.slice(opener.keep ? 0 : m[0].length, comma);
    const effect = opened.slice(comma + 1);
    if (tokens(cause) < 2 || tokens(effect) < 2) continue;
    const mechanism = opener.keep ? cause.trim() : `${m[0].trim()} ${cause.trim()}`;
    return join(splitCausal(cause, depth - 1, false), splitCausal(trimFrame(effect), depth - 1, false), opener, mechanism, true);
  }
  for (const m of candidates(text)) {
    const rawLeft = text.slice(0, m.index);
    if (NEGATED_BEFORE.test(rawLeft)) continue;
    if (m.conn.dir === 'forward' && /\b(?:the|a|an|of|its|their|his|her)\s+$/i.test(rawLeft)) continue;
    const left = trimFrame(rawLeft);
    const right = text.slice(m.conn.keep ? m.index : m.index + m.length);
    if (tokens(left) < (top ? 2 : 3) || tokens(right) < 2) continue;
    const connective = text.slice(m.index, m.index + m.length).replace(/^[,\s]+/, '');
    if (m.conn.confidence < MEDIUM && /\b(?:said|says|told|added)\s*$/i.test(left)) continue;
    const { head, tail } = splitTail(stripTrailing(right));
    const mechanism = m.conn.keep ? head.trim() : `${connective} ${head.trim()}`.trim();
    // A kept connective opens its clause ("in protest against X"): splitting it again would cut the clause from its own connective.
    const rightSplit = m.conn.keep ? single(head) : splitCausal(head, depth - 1, false);
    const joined = join(splitCausal(left, depth - 1, false), rightSplit, m.conn, mechanism, m.conn.dir === 'forward');
    return tail ? append(joined, tailSplit(rightSplit.clauses[rightSplit.clauses.length - 1]?.text ?? head, tail, depth)) : joined;
  }
  return single(text);
}
