import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelExtractor, createOpenAIExtractor } from './openai.ts';

const request = {
  content: 'Prices will rise because demand spikes. Acme Power agrees.',
  observedAt: 1_719_824_400_000_000,
  knownEntities: new Set(['acme power']),
};

const valid = {
  blocks: [
    { kind: 'prediction', statement: 'Prices will rise', negated: false },
    { kind: 'claim', statement: 'demand spikes', negated: false },
  ],
  entities: ['Acme Power'],
  links: [{ cause: 1, effect: 0, type: 'CAUSES', mechanism: 'because demand spikes' }],
};

function mockReturning(text: string) {
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: 0 } },
      warnings: [],
    }),
  });
}

describe('model extractor (AI SDK mock model)', () => {
  it('maps valid structured output to an extraction, and sends the message and known entities', async () => {
    const model = mockReturning(JSON.stringify(valid));
    const x = await createModelExtractor(model, 'openai:mock').extract(request);
    expect(x.blocks).toEqual([
      { kind: 'prediction', statement: 'Prices will rise' },
      { kind: 'claim', statement: 'demand spikes' },
    ]);
    expect(x.entities).toEqual(['Acme Power']);
    expect(x.links).toEqual([{ cause: 1, effect: 0, type: 'CAUSES', mechanism: 'because demand spikes', confidence: 0.7 }]);
    const sent = JSON.stringify(model.doGenerateCalls[0]?.prompt);
    expect(sent).toContain('demand spikes');
    expect(sent).toContain('acme power');
    expect(model.doGenerateCalls[0]?.responseFormat).toMatchObject({ type: 'json' });
  });

  it('throws on output that is not JSON', async () => {
    await expect(createModelExtractor(mockReturning('Sure! Here are the claims: ...'), 'm').extract(request)).rejects.toThrow();
  });

  it('throws on output that breaks the schema', async () => {
    const bad = { ...valid, blocks: [{ kind: 'opinion', statement: 'x', negated: false }] };
    await expect(createModelExtractor(mockReturning(JSON.stringify(bad)), 'm').extract(request)).rejects.toThrow();
  });

  it('throws when a link names a block that does not exist', async () => {
    const bad = { ...valid, links: [{ cause: 5, effect: 0, type: 'CAUSES', mechanism: 'because' }] };
    await expect(createModelExtractor(mockReturning(JSON.stringify(bad)), 'm').extract(request)).rejects.toThrow(/does not exist/);
  });

  it('passes on a model error', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new Error('model is down');
      },
    });
    await expect(createModelExtractor(model, 'm').extract(request)).rejects.toThrow(/model is down/);
  });
});

describe('openai:<model> against a fake OpenAI-compatible server', () => {
  let server: Server;
  let baseURL: string;
  const bodies: any[] = [];
  const paths: string[] = [];
  const auth: (string | undefined)[] = [];

  const readBody = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const body = JSON.parse(await readBody(req));
      bodies.push(body);
      paths.push(req.url ?? '');
      auth.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify(valid) } }],
          usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('calls chat completions with a JSON schema and reads the structured answer', async () => {
    const extractor = createOpenAIExtractor({ model: 'tiny-model', baseURL, apiKey: 'sk-test' });
    expect(extractor.id).toBe('openai:tiny-model');
    const x = await extractor.extract(request);
    expect(x.blocks.map((b) => b.statement)).toEqual(['Prices will rise', 'demand spikes']);
    expect(paths[0]).toBe('/v1/chat/completions');
    expect(auth[0]).toBe('Bearer sk-test');
    expect(bodies[0].model).toBe('tiny-model');
    expect(bodies[0].response_format?.type).toBe('json_schema');
    expect(JSON.stringify(bodies[0].messages)).toContain('demand spikes');
  });
});
