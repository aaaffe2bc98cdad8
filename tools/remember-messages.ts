// The message half of `remember`: each message is extracted (offline rules or a model), then every
// message's episode, blocks, entities and edges are written in ONE ledger write, so a request is one
// transaction. A message the extractor fails on is refused by itself and nothing of it is written.
import { z } from 'zod';
import { createLocalExtractor } from '../extract/local.ts';
import { planMessages, SpaceIndex, type EpisodeSummary, type MessageToWrite } from '../extract/to-blocks.ts';
import { extractionProblem, ExtractionSchema, type Extraction, type Extractor } from '../extract/types.ts';
import type { Micros } from '../storage/time.ts';
import type { WriteOutcome } from '../storage/log/write-plan.ts';
import type { Context } from './context.ts';
import { invalidInput } from './errors.ts';
import { Instant, instant } from './schemas.ts';

export const MAX_MESSAGES = 1000;
/** Model calls in flight at once for one request. */
const MODEL_CONCURRENCY = 4;

export const MessageSchema = z.strictObject({
  content: z
    .string()
    .max(100_000)
    .refine((s) => s.trim().length > 0, { message: 'must not be empty' })
    .describe('What was said or written, in plain words.'),
  observed_at: Instant.describe('When it was said; every extracted block is asserted then.'),
  source_description: z.string().max(2000).describe('Where it came from, e.g. "chat with Dana".'),
});

export type Message = z.infer<typeof MessageSchema>;

export interface MessageRefusal {
  id: string;
  kind: 'message';
  reason: string;
}

export interface MessagesOutcome {
  outcome: WriteOutcome;
  refusedMessages: MessageRefusal[];
  resolvedWarnings: { id: string; kind: 'node'; warning: 'already_remembered' }[];
  episodes: EpisodeSummary[];
}

const fallbackExtractor = createLocalExtractor();

async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function extractOne(extractor: Extractor, m: MessageToWrite, index: SpaceIndex): Promise<Extraction | string> {
  try {
    const raw = await extractor.extract({ content: m.content, observedAt: m.observedAt, knownEntities: index.entityNamesAt(m.observedAt) });
    const parsed = ExtractionSchema.safeParse(raw);
    if (!parsed.success) return `extraction_failed: malformed extraction (${parsed.error.issues[0]?.message ?? 'invalid'})`;
    const problem = extractionProblem(parsed.data);
    return problem ? `extraction_failed: malformed extraction (${problem})` : parsed.data;
  } catch (error) {
    return `extraction_failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
  }
}

export async function rememberMessages(
  input: { space: string; messages: Message[]; backfill?: { declared_captured_at: Micros; reason: string } | undefined },
  ctx: Context,
): Promise<MessagesOutcome> {
  const now = ctx.ledger.now();
  const messages: MessageToWrite[] = input.messages.map((m, i) => ({
    index: i,
    content: m.content,
    observedAt: instant(m.observed_at),
    source: m.source_description,
  }));
  const future = messages.filter((m) => m.observedAt > now);
  if (future.length > 0) {
    throw invalidInput(
      future.map((m) => ({
        type: 'observed_at_in_future',
        loc: ['messages', m.index, 'observed_at'],
        msg: 'observed_at cannot be later than the present instant',
        input: input.messages[m.index]?.observed_at,
      })),
    );
  }
  // Blocks take the declared instant as their knowledge time: a message said after it would be known
  // before it was said, and past reads would see the future.
  const declared = input.backfill?.declared_captured_at;
  const unsaid = declared === undefined ? [] : messages.filter((m) => m.observedAt > declared);
  if (unsaid.length > 0) {
    throw invalidInput(
      unsaid.map((m) => ({
        type: 'observed_after_backfill',
        loc: ['messages', m.index, 'observed_at'],
        msg: 'observed_at cannot be later than backfill.declared_captured_at (the rows would be known before they were said)',
        input: input.messages[m.index]?.observed_at,
      })),
    );
  }
  // Earlier messages first, so a later one may resolve onto what an earlier one of the request said.
  const ordered = [...messages].sort((a, b) => a.observedAt - b.observedAt || a.index - b.index);
  const latest = ordered[ordered.length - 1]?.observedAt ?? now;
  await ctx.ledger.settled(latest);
  // The space's view (what it already holds is all the index reads), held until the write is planned.
  return ctx.ledger.withView(ctx.tenant, input.space, (view) => extractAndWrite(new SpaceIndex(view, input.space)));

  async function extractAndWrite(index: SpaceIndex): Promise<MessagesOutcome> {
    const extractor = ctx.services.extractor ?? fallbackExtractor;
    const concurrency = extractor.id === 'local' ? 1 : MODEL_CONCURRENCY;
    const extracted = await mapBounded(ordered, concurrency, (m) => extractOne(extractor, m, index));

    const refusedMessages: MessageRefusal[] = [];
    const items: { message: MessageToWrite; extraction: Extraction }[] = [];
    ordered.forEach((m, i) => {
      const x = extracted[i];
      if (typeof x === 'string' || x === undefined)
        refusedMessages.push({ id: `messages[${m.index}]`, kind: 'message', reason: x ?? 'extraction_failed' });
      else items.push({ message: m, extraction: x });
    });
    const plan = planMessages(input.space, index, items);
    const outcome = await ctx.ledger.write(ctx.tenant, {
      space: input.space,
      backfill: input.backfill,
      nodes: plan.nodes,
      edges: plan.edges,
      endpointSpace: ctx.confinedSpace,
    });
    return {
      outcome,
      refusedMessages,
      episodes: plan.episodes.sort((a, b) => a.message - b.message),
      resolvedWarnings: [...new Set(plan.resolved)].map((id) => ({ id, kind: 'node', warning: 'already_remembered' })),
    };
  }
}
