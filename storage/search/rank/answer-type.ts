// A question says what kind of answer it wants: "When did Caroline go to the support group?" is answered
// by a statement that says when ("I went yesterday", "last Friday", "in May 2023"), and one that only
// repeats the question's words ("Caroline loves the support group") is not the answer. Question answering
// has matched the expected answer type against candidate passages for decades; here it is a small credit
// to a candidate whose own text holds an expression of the kind asked for.
import type { NodeVersion } from '../../types.ts';
import { messageText } from './context.ts';
import { enabled } from './mechanisms.ts';
import { MONTHS } from './time-query.ts';

export type AnswerType = 'time' | 'duration' | 'place';

/**
 * Credit (in fused-score units, as coverage's) for a candidate holding the kind of answer the question asks
 * for. Chosen on LoCoMo conversations 1-5, turns mode (recall_any@10 / recall_all@10 / MRR): none 0.851 /
 * 0.728 / 0.587, 0.1 0.851 / 0.729 / 0.594, 0.2 0.857 / 0.734 / 0.597, 0.3 0.857 / 0.734 / 0.602, 0.4 0.853 /
 * 0.732 / 0.601; messages mode, none 0.840 / 0.724 / 0.595, 0.3 0.846 / 0.730 / 0.609.
 */
export const ANSWER_TYPE_WEIGHT = 0.3;

const MONTH = MONTHS.join('|');
// "may" is a month only before a day's number; otherwise it is mostly the verb.
const MONTH_NOT_MAY = MONTHS.filter((m) => m !== 'may').join('|');
const DAY = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday';
const UNIT = 'minutes?|hours?|days?|nights?|weeks?|weekends?|months?|years?|decades?|semesters?';
// Relative and absolute times a statement dates itself with.
const TIME = new RegExp(
  [
    `\\b(?:yesterday|today|tonight|tomorrow|recently|lately|earlier|ago)\\b`,
    `\\b(?:last|next|this|past|coming)\\s+(?:${UNIT}|${DAY}|${MONTH}|morning|afternoon|evening|night|summer|spring|fall|autumn|winter|time)\\b`,
    `\\b(?:${DAY})s?\\b`,
    `\\b(?:${MONTH_NOT_MAY})\\b|\\bmay\\s+\\d`,
    `\\b(?:19|20)\\d\\d\\b`,
    `\\b(?:since|in|for|after|before|over)\\s+(?:the\\s+)?(?:a|an|one|two|three|four|five|six|few|couple|several|\\d+)\\s+(?:of\\s+)?(?:${UNIT})\\b`,
  ].join('|'),
  'i',
);
// A length of time: a number or count with a unit ("three years", "a couple of months", "since 2016").
const DURATION = new RegExp(
  `\\b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple|several|many|\\d+)\\s+(?:of\\s+)?(?:${UNIT})\\b|\\bsince\\b`,
  'i',
);
// A named place: a preposition of place before a capitalised word ("in Paris", "at the Louvre").
const PLACE = /\b(?:in|at|to|from|near|around|visited|visiting)\s+(?:the\s+)?\p{Lu}/u;

const PATTERNS: Record<AnswerType, RegExp> = { time: TIME, duration: DURATION, place: PLACE };

/** The kind of answer a question asks for, from its wording, or null when it names none this knows. */
export function answerType(query: string): AnswerType | null {
  const q = query.trim().toLowerCase();
  if (/^how\s+long\b(?!\s+ago)/.test(q)) return 'duration';
  if (/^(?:when|since when)\b|^how\s+long\s+ago\b|^(?:in\s+)?(?:what|which)\s+(?:year|month|day|date|week|time of year)\b/.test(q))
    return 'time';
  if (/^where\b/.test(q)) return 'place';
  return null;
}

/** Whether the text holds an expression of the kind asked for (a duration also counts as a time). */
export function holdsAnswer(type: AnswerType, text: string): boolean {
  return PATTERNS[type].test(text) || (type === 'duration' && TIME.test(text));
}

/**
 * Per block version and type, whether its own text holds such an answer; fixed once written, so kept, as two
 * bits a type in a small integer (a Map a version was objects for the collector to mark, ~300k versions).
 */
const held = new WeakMap<NodeVersion, number>();
const TYPE_BIT: Record<AnswerType, number> = { time: 0, duration: 2, place: 4 };

/** ANSWER_TYPE_WEIGHT when the block's own text holds the kind of answer `type` asks for, else 0. */
export function answerCredit(type: AnswerType | null, n: NodeVersion): number {
  if (type === null || ANSWER_TYPE_WEIGHT <= 0 || !enabled('answer')) return 0;
  // Bit `at`: the type was looked for; bit `at + 1`: it was found.
  const at = TYPE_BIT[type];
  let bits = held.get(n) ?? 0;
  if (((bits >> at) & 1) === 0) held.set(n, (bits |= (holdsAnswer(type, messageText(n) ?? '') ? 3 : 1) << at));
  return (bits >> (at + 1)) & 1 ? ANSWER_TYPE_WEIGHT : 0;
}
