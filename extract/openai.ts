// The model extractor: any OpenAI-compatible chat server through the Vercel AI SDK's structured output.
// The model fills a zod schema; the SDK validates it, and a failure (network, refusal, malformed JSON,
// a link to a block that does not exist) throws, so the caller refuses that message alone.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, Output, type LanguageModel } from 'ai';
import { z } from 'zod';
import { formatInstant } from '../storage/time.ts';
import { CAUSAL_TYPES, extractionProblem, type Extraction, type ExtractRequest, type Extractor } from './types.ts';

// Every field required: strict structured-output modes refuse optional properties.
const ModelOutput = z.object({
  blocks: z
    .array(
      z.object({
        kind: z
          .enum(['claim', 'prediction'])
          .describe('claim: stated as holding; prediction: about the future, expected, planned or forecast'),
        statement: z.string().min(1).describe("one self-contained statement, in the speaker's words"),
        negated: z.boolean().describe('true when the statement denies something'),
      }),
    )
    .describe('the claims and predictions the message states'),
  entities: z.array(z.string().min(1)).describe('names of people, organisations, places, products and things mentioned'),
  links: z
    .array(
      z.object({
        cause: z.number().int().min(0).describe('index in blocks of the cause'),
        effect: z.number().int().min(0).describe('index in blocks of the effect'),
        type: z.enum(CAUSAL_TYPES).describe('CAUSES, CONTRIBUTING_FACTOR (one cause among several), TRIGGERS (sets off), PREVENTS'),
        mechanism: z.string().describe('the words of the message that argue the link'),
      }),
    )
    .describe('causal links the speaker argues between blocks; none when the message argues none'),
});

const SYSTEM =
  'You extract memory blocks from one message. Split it into short self-contained claims (statements presented as ' +
  'holding) and predictions (about the future: will, expects, plans, forecasts). List the named entities it mentions. ' +
  'List only the causal links the speaker actually argues ("because", "due to", "led to", "so", "prevents"), as ' +
  'indices into blocks. Use only what the message says; do not add outside knowledge.';

function prompt(r: ExtractRequest): string {
  const known = [...r.knownEntities].slice(0, 200);
  return [
    `Observed at: ${formatInstant(r.observedAt)}`,
    known.length > 0 ? `Entities already known (reuse these names when the message refers to them): ${known.join('; ')}` : '',
    'Message:',
    r.content,
  ]
    .filter(Boolean)
    .join('\n');
}

export function createModelExtractor(model: LanguageModel, id: string, opts: { timeoutMs?: number } = {}): Extractor {
  return {
    id,
    async extract(request) {
      const result = await generateText({
        model,
        system: SYSTEM,
        prompt: prompt(request),
        output: Output.object({ schema: ModelOutput, name: 'extraction' }),
        maxRetries: 1,
        abortSignal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
      });
      const out = result.output;
      const extraction: Extraction = {
        blocks: out.blocks.map((b) =>
          b.negated ? { kind: b.kind, statement: b.statement, negated: true } : { kind: b.kind, statement: b.statement },
        ),
        entities: out.entities,
        links: out.links.map((l) => ({ ...l, confidence: 0.7 })),
      };
      const problem = extractionProblem(extraction);
      if (problem) throw new Error(`malformed model output: ${problem}`);
      return extraction;
    },
  };
}

/** `openai:<model>` against `baseURL` (any OpenAI-compatible server), through its chat completions API. */
export function createOpenAIExtractor(spec: {
  model: string;
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  fetch?: typeof fetch;
}): Extractor {
  const provider = createOpenAI({ baseURL: spec.baseURL, apiKey: spec.apiKey ?? 'not-needed', fetch: spec.fetch });
  return createModelExtractor(provider.chat(spec.model), `openai:${spec.model}`);
}
