// The offline extractor: plain rules, no model, deterministic. Sentences become claims, or predictions
// when they speak of the future; a causal connective splits a sentence into cause and effect clauses
// linked by the type the connective argues; capitalised names and names the space already knows become
// entities. Written for English; other text passes through as claims without links.
import { findEntities } from './local-entities.ts';
import { SPACE_AND_PUNCTUATION, trimEndOf, trimStartOf } from './trim.ts';
import { splitCausal, type Clause } from './local-causal.ts';
import type { ExtractedBlock, ExtractedLink, Extraction, ExtractRequest, Extractor } from './types.ts';

const SENTENCE_END = /(?<=[.!?。！？])["'”’)\]]*\s+(?=["'“‘(\[]?[\p{Lu}\p{N}\p{Lo}])|(?<=[。！？])|\n+/u;
// A full stop after these is not a sentence end.
const ABBREVIATION =
  /(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Sr|Jr|Inc|Ltd|Co|Corp|vs|etc|e\.g|i\.e|U\.S|U\.K|No|Gen|Gov|Sen|Rep|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.|\b\p{Lu}\.)$/u;

export function splitSentences(text: string): string[] {
  const parts = text.split(SENTENCE_END);
  const out: string[] = [];
  for (const raw of parts) {
    const part = raw.trim();
    if (!part) continue;
    const last = out.length - 1;
    if (last >= 0 && ABBREVIATION.test((out[last] ?? '').slice(-16))) out[last] = `${out[last]} ${part}`;
    else out.push(part);
  }
  return out;
}

const FUTURE =
  /\b(?:will|shall|won['’]t|going to|gonna|about to|expects?|expected|expecting|forecasts?|forecasted|predicts?|predicted to|likely|unlikely|plans? to|planned to|planning to|intends? to|set to|projected|anticipates?|anticipated|tomorrow|next (?:week|month|year|quarter|season|time)|later this (?:week|month|year)|soon|upcoming)\b|\w['’]ll\b/i;
// Lower case only: "in May" is a month.
const MODAL = /\b(?:may|might|could)\s+(?:be|have|not|rise|fall|go|come|need|happen|become|get|take|make|see|lead|cause)\b/;
const NEGATION = /\b(?:not|no|never|neither|nor|nobody|nothing|none|without|no longer|cannot)\b|n['’]t\b/i;

export const isPrediction = (clause: string): boolean => FUTURE.test(clause) || MODAL.test(clause);
export const isNegated = (clause: string): boolean => NEGATION.test(clause);

/** Tidies a clause into a statement: no dangling punctuation or leading conjunction. */
export function tidy(clause: string): string {
  let s = clause.trim();
  s = trimEndOf(trimStartOf(s, ' \t\n,;:–—-'), SPACE_AND_PUNCTUATION);
  s = s.replace(/^(?:and|but|or|then|which|that|who|so)\s+/i, '');
  // Only the last few words can be a dangling conjunction; matching the whole clause could backtrack for long.
  const cut = Math.max(0, s.length - 60);
  s = s.slice(0, cut) + s.slice(cut).replace(/(?:[,\s]+(?:which|that|and|but|or|who|while|as|when))+$/i, '');
  s = s.replace(/\s+/g, ' ').trim();
  return s;
}

function block(text: string): ExtractedBlock {
  const statement = tidy(text);
  const b: ExtractedBlock = { kind: isPrediction(statement) ? 'prediction' : 'claim', statement };
  if (isNegated(statement)) b.negated = true;
  return b;
}

const tokenCount = (s: string): number => (s.match(/[\p{L}\p{N}]+/gu) ?? []).length;

// A sentence opening with one of these argues that the previous sentence caused it.
const CARRY_OVER =
  /^(?:so(?=,| (?:i|we|you|he|she|they|it|the|a|an|my|our|his|her|their|this|there)\b)|therefore|thus|hence|consequently|as a result|as a consequence|because of (?:this|that)|that is why|that's why|this is why)\b[,:]?\s*/i;

export function extractLocal(content: string, knownEntities: ReadonlySet<string> = new Set()): Extraction {
  const blocks: ExtractedBlock[] = [];
  const links: ExtractedLink[] = [];
  const index = new Map<string, number>();
  const add = (clause: Clause): number | null => {
    const b = block(clause.text);
    if (tokenCount(b.statement) === 0) return null;
    const key = b.statement.toLowerCase();
    const seen = index.get(key);
    if (seen !== undefined) return seen;
    index.set(key, blocks.length);
    blocks.push(b);
    return blocks.length - 1;
  };
  let previousLast: number | null = null;
  for (const sentence of splitSentences(content)) {
    const carry = CARRY_OVER.exec(sentence);
    const body = carry ? sentence.slice(carry[0].length) : sentence;
    const split = splitCausal(body);
    const ids = split.clauses.map(add);
    for (const l of split.links) {
      const cause = ids[l.cause];
      const effect = ids[l.effect];
      if (cause === null || cause === undefined || effect === null || effect === undefined || cause === effect) continue;
      links.push({ cause, effect, type: l.type, mechanism: l.mechanism, confidence: l.confidence });
    }
    const first = ids.find((x) => x !== null) ?? null;
    if (carry && previousLast !== null && first !== null && first !== previousLast) {
      links.push({ cause: previousLast, effect: first, type: 'CAUSES', mechanism: tidy(sentence), confidence: 0.8 });
    }
    const last = [...ids].reverse().find((x) => x !== null);
    if (last !== undefined && last !== null) previousLast = last;
  }
  return { blocks, entities: findEntities(content, knownEntities), links };
}

export function createLocalExtractor(): Extractor {
  return {
    id: 'local',
    extract: async (request: ExtractRequest) => extractLocal(request.content, request.knownEntities),
  };
}
