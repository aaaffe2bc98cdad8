// The extraction port: one message in, the blocks a speaker states, the entities they name and the
// causal links they argue out. Extractors know nothing of the ledger; `to-blocks.ts` turns a result
// into rows. Both extractors (local rules, remote model) return this same shape.
import { z } from 'zod';
import type { Micros } from '../storage/time.ts';

export const CAUSAL_TYPES = ['CAUSES', 'CONTRIBUTING_FACTOR', 'TRIGGERS', 'PREVENTS'] as const;
export type CausalType = (typeof CAUSAL_TYPES)[number];

export const ExtractedBlockSchema = z.object({
  kind: z.enum(['claim', 'prediction']).describe('claim: stated as holding; prediction: about the future, expected, planned or forecast.'),
  statement: z.string().min(1).max(2000).describe('The statement in plain words, as the speaker made it.'),
  negated: z.boolean().optional().describe('The statement denies something ("did not", "never").'),
});

export const ExtractedLinkSchema = z.object({
  cause: z.number().int().min(0).describe('Index into blocks of the cause.'),
  effect: z.number().int().min(0).describe('Index into blocks of the effect.'),
  type: z.enum(CAUSAL_TYPES).describe('CAUSES, CONTRIBUTING_FACTOR (one cause among several), TRIGGERS (set off), PREVENTS.'),
  mechanism: z.string().max(2000).describe('The words that argue the link, e.g. "because demand spikes".'),
  confidence: z.number().min(0).max(1).optional().describe('How plainly the speaker argues the link, 0 to 1.'),
});

/** The structured output a model is asked for, and the shape every extractor returns. */
export const ExtractionSchema = z.object({
  blocks: z.array(ExtractedBlockSchema).max(200).describe('Claims and predictions the message states.'),
  entities: z.array(z.string().min(1).max(300)).max(200).describe('Names of people, organisations, places and things mentioned.'),
  links: z.array(ExtractedLinkSchema).max(200).describe('Causal links the speaker argues between blocks.'),
});

export type ExtractedBlock = z.infer<typeof ExtractedBlockSchema>;
export type ExtractedLink = z.infer<typeof ExtractedLinkSchema>;
export type Extraction = z.infer<typeof ExtractionSchema>;

export interface ExtractRequest {
  content: string;
  observedAt: Micros;
  /**
   * Entity names already in the space and known at `observedAt`, lower-cased: an extractor may
   * recognise them in the text. Nothing learned later is ever offered (no look-ahead).
   */
  knownEntities: ReadonlySet<string>;
}

export interface Extractor {
  /** `local` or `openai:<model>`. */
  readonly id: string;
  /** Throws when the message cannot be extracted (model failure, malformed output). */
  extract(request: ExtractRequest): Promise<Extraction>;
}

/** Checks the references inside a result, which a schema cannot: links must name existing blocks. */
export function extractionProblem(x: Extraction): string | null {
  for (const [i, l] of x.links.entries()) {
    if (l.cause >= x.blocks.length || l.effect >= x.blocks.length) return `links[${i}] names a block that does not exist`;
    if (l.cause === l.effect) return `links[${i}] links a block to itself`;
  }
  return null;
}
