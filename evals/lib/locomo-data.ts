// Reads LoCoMo (snap-research/locomo, data/locomo10.json) into conversations of dated sessions and the
// questions asked about them. The data set is not part of the project: it is read at run time from
// ../shared/data, and its evidence lists are only used to score, never to rank.
import { existsSync, readFileSync } from 'node:fs';

export interface Turn {
  /** `D<session>:<index>`, as in the data set. */
  id: string;
  speaker: string;
  text: string;
  /** Image description, on turns that shared a photo. */
  caption: string | null;
}

export interface Session {
  index: number;
  /** Start of the session, epoch seconds (the data's local time read as UTC). */
  start: number;
  turns: Turn[];
}

export interface Question {
  question: string;
  category: number;
  evidence: string[];
}

export interface Conversation {
  id: string;
  speakers: [string, string];
  sessions: Session[];
  questions: Question[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → epoch seconds, UTC. */
export function parseSessionDate(text: string): number {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i.exec(text.trim());
  if (!m) throw new Error(`unreadable session date: ${text}`);
  let hour = Number(m[1]) % 12;
  if (m[3]?.toLowerCase() === 'pm') hour += 12;
  const month = MONTHS.indexOf((m[5] ?? '').toLowerCase());
  if (month < 0) throw new Error(`unknown month in ${text}`);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])) / 1000;
}

/** Evidence ids as written (`"D8:6; D9:17"`, `"D:11:26"`, `"D30:05"`) → canonical `D<s>:<i>` ids. */
export function normaliseEvidence(raw: readonly string[]): string[] {
  const out = new Set<string>();
  for (const item of raw) {
    for (const part of String(item).split(/[;,\s]+/)) {
      const m = /^D:?(\d+):(\d+)$/.exec(part.trim());
      if (m) out.add(`D${Number(m[1])}:${Number(m[2])}`);
    }
  }
  return [...out];
}

export function loadLocomo(path: string): Conversation[] {
  if (!existsSync(path)) {
    throw new Error(
      `LoCoMo data not found at ${path}. It is read at run time from the shared data folder (../shared/data/locomo/locomo10.json); ` +
        'download snap-research/locomo data/locomo10.json there to run this evaluation.',
    );
  }
  const raw = JSON.parse(readFileSync(path, 'utf8')) as {
    sample_id: string;
    conversation: Record<string, unknown>;
    qa: { question: string; category: number; evidence?: string[] }[];
  }[];
  return raw.map((sample) => {
    const c = sample.conversation;
    const sessions: Session[] = [];
    for (const key of Object.keys(c)) {
      const m = /^session_(\d+)$/.exec(key);
      const turns = c[key];
      const date = c[`${key}_date_time`];
      if (!m || !Array.isArray(turns) || typeof date !== 'string') continue;
      sessions.push({
        index: Number(m[1]),
        start: parseSessionDate(date),
        turns: (turns as { speaker: string; dia_id: string; text: string; blip_caption?: string }[]).map((t) => ({
          id: normaliseEvidence([t.dia_id])[0] ?? t.dia_id,
          speaker: t.speaker,
          text: t.text,
          caption: t.blip_caption ?? null,
        })),
      });
    }
    sessions.sort((a, b) => a.index - b.index);
    const questions = sample.qa
      .map((q) => ({ question: String(q.question), category: q.category, evidence: normaliseEvidence(q.evidence ?? []) }))
      .filter((q) => q.evidence.length > 0);
    return { id: sample.sample_id, speakers: [String(c.speaker_a), String(c.speaker_b)], sessions, questions };
  });
}
