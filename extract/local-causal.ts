// Splits one sentence on the causal connectives a speaker uses to argue a link ("because", "due to",
// "led to", "so", ...) into clauses, and says which clause is the cause and which the effect. A
// connective under negation ("not because", "did not cause") argues no link. Clauses are split again,
// a few levels deep, so "A because B, which led to C" gives two links.
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
}

const STRONG = 0.8;
const WEAK = 0.4;

export const CONNECTIVES: readonly Connective[] = [
  { words: 'because of|because|due to|owing to|on account of|as a (?:direct )?result of|as a consequence of|thanks to|caused by|resulting from|stemming from|as a result|in the wake of', dir: 'backward', type: 'CAUSES', confidence: STRONG },
  { words: '(?:was|were|is|are|been|being) (?:triggered|sparked|prompted|set off) by|triggered by|sparked by|prompted by', dir: 'backward', type: 'TRIGGERS', confidence: STRONG },
  { words: '(?:partly|partially|in part) (?:because of|because|due to)|driven by|fu?elled by|fueled by|helped by', dir: 'backward', type: 'CONTRIBUTING_FACTOR', confidence: STRONG },
  { words: '(?:was|were|is|are) prevented by|blocked by', dir: 'backward', type: 'PREVENTS', confidence: STRONG },
  { words: 'in protest (?:against|over|at|of)|in response to|in reaction to|in retaliation (?:for|against)|demanding|to demand|to protest(?: against)?|protesting(?: against)?|over|against', dir: 'backward', type: 'CAUSES', confidence: WEAK },
  { words: 'after|following|amid|amidst|when|with', dir: 'backward', type: 'CONTRIBUTING_FACTOR', confidence: WEAK },
  { words: 'leads? to|led to|leading to|results? in|resulted in|resulting in|causes|caused|causing|cause|brought about|gave rise to|give rises? to|gives rise to|forced|forcing|forces|made it|makes it|paralysed|paralyzed|crippled|disrupted|disrupting', dir: 'forward', type: 'CAUSES', confidence: STRONG },
  { words: 'triggered|triggers|triggering|trigger|sparked|sparks|sparking|set off|sets off|prompted|prompts|prompting', dir: 'forward', type: 'TRIGGERS', confidence: STRONG },
  { words: 'contributed to|contributes to|contributing to|contribute to|helped|helps|fu?elled|fueled|fuelling|fueling', dir: 'forward', type: 'CONTRIBUTING_FACTOR', confidence: STRONG },
  { words: 'prevented|prevents|preventing|prevent|stopped|stops|averted|blocked', dir: 'forward', type: 'PREVENTS', confidence: STRONG },
  { words: ',? ?(?:and )?therefore|,? ?(?:and )?thus|,? ?(?:and )?hence|,? ?(?:and )?consequently|, which means(?: that)?|, meaning(?: that)?|, so(?! (?:much|many|far|that|long|on|called|too|as|to)\\b)|so(?= (?:i|we|you|he|she|they|it|the|a|an|my|our|his|her|their|this|there|prices?|demand)\\b)', dir: 'forward', type: 'CAUSES', confidence: STRONG },
];

// Opening connectives: "Because B, A" and the like put the cause first, up to a comma.
const OPENERS: readonly (Connective & { re: RegExp })[] = [
  { words: '', re: /^(?:because of|because|due to|owing to|as a (?:direct )?result of|thanks to|since|given that|in the wake of)\s+/i, dir: 'backward', type: 'CAUSES', confidence: STRONG },
  { words: '', re: /^(?:after|following|amid|with)\s+/i, dir: 'backward', type: 'CONTRIBUTING_FACTOR', confidence: WEAK },
];

const COMPILED = CONNECTIVES.map((c) => ({ ...c, re: new RegExp(`(?:(?<![\\p{L}\\p{N}])|(?=,))(?:${c.words})(?![\\p{L}\\p{N}])`, 'giu') }));

// A connective under negation ("not because", "did not cause", "never led to") argues no link.
const NEGATED_BEFORE = /(?:\bnot|n['’]t|\bnever|\bno longer|\bhardly)\s+(?:\w+\s+)?$/i;
const tokens = (s: string): number => (s.match(/[\p{L}\p{N}]+/gu) ?? []).length;
// Attribution around a clause ("..., he said") belongs to the sentence, not to the cause.
const TRAILING_ATTRIBUTION = /,?\s*(?:["'”’]\s*)?,?\s*(?:[\p{L}.'’-]+\s+){0,5}(?:said|says|added|told [\p{L}]+|reported|according to [^,]+)\s*[.!?]?\s*$/iu;

function stripTrailing(text: string): string {
  return text.replace(TRAILING_ATTRIBUTION, '').replace(/[\s.!?;:,]+$/u, '');
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
  // Strong connectives first, then leftmost; among equals the longer phrase ("because of" over "because").
  return found.sort((a, b) => b.conn.confidence - a.conn.confidence || a.index - b.index || b.length - a.length);
}

const single = (text: string): CausalSplit => ({ clauses: [{ text }], links: [] });

function join(left: CausalSplit, right: CausalSplit, conn: Connective, mechanism: string, leftIsCause: boolean): CausalSplit {
  const offset = left.clauses.length;
  const clauses = [...left.clauses, ...right.clauses];
  const links = [...left.links, ...right.links.map((l) => ({ ...l, cause: l.cause + offset, effect: l.effect + offset }))];
  const near = { left: offset - 1, right: offset };
  links.push({
    cause: leftIsCause ? near.left : near.right, effect: leftIsCause ? near.right : near.left,
    type: conn.type, mechanism, confidence: conn.confidence,
  });
  return { clauses, links };
}

export function splitCausal(sentence: string, depth = 3): CausalSplit {
  const text = sentence.trim();
  if (depth <= 0 || tokens(text) < 4) return single(text);
  for (const opener of OPENERS) {
    const m = opener.re.exec(text);
    const comma = m ? text.indexOf(',', m[0].length) : -1;
    if (!m || comma < 0) continue;
    const cause = text.slice(m[0].length, comma);
    const effect = text.slice(comma + 1);
    if (tokens(cause) < 2 || tokens(effect) < 2) continue;
    const mechanism = `${m[0].trim()} ${cause.trim()}`;
    return join(splitCausal(cause, depth - 1), splitCausal(effect, depth - 1), opener, mechanism, true);
  }
  for (const m of candidates(text)) {
    const left = text.slice(0, m.index);
    const right = text.slice(m.index + m.length);
    if (tokens(left) < 2 || tokens(right) < 2) continue;
    if (NEGATED_BEFORE.test(left)) continue;
    const connective = text.slice(m.index, m.index + m.length).replace(/^[,\s]+/, '');
    const rightText = stripTrailing(right);
    const mechanism = `${connective} ${rightText.trim()}`.trim();
    return join(splitCausal(left, depth - 1), splitCausal(rightText, depth - 1), m.conn, mechanism, m.conn.dir === 'forward');
  }
  return single(text);
}
