// `openai:<model>`: any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM...) through the
// Vercel AI SDK. The dimension is whatever the model returns, learned from one probe call.
import { createOpenAI } from '@ai-sdk/openai';
import { embedMany, type EmbeddingModel } from 'ai';
import { normalise, type Embedder } from './embedder.ts';

const BATCH = 256;

export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly #model: EmbeddingModel;
  #dimension = 0;

  constructor(model: EmbeddingModel, modelName: string) {
    this.#model = model;
    this.id = `openai:${modelName}`;
  }

  static fromSettings(modelName: string, baseURL: string | undefined, apiKey: string | undefined): OpenAIEmbedder {
    // Local servers (Ollama, vLLM) take any key; the SDK insists on one being set.
    const provider = createOpenAI({ baseURL, apiKey: apiKey ?? 'not-needed' });
    return new OpenAIEmbedder(provider.embedding(modelName), modelName);
  }

  dimension(): number {
    if (this.#dimension === 0) throw new Error(`${this.id}: dimension unknown before ready()`);
    return this.#dimension;
  }

  async ready(): Promise<void> {
    if (this.#dimension > 0) return;
    const [probe] = await this.embed(['dimension probe']);
    if (!probe || probe.length === 0) throw new Error(`${this.id}: the model returned an empty embedding`);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      // Empty strings are refused by some servers; a single space embeds as "nothing".
      const values = texts.slice(i, i + BATCH).map((t) => (t.trim() === '' ? ' ' : t));
      const { embeddings } = await embedMany({ model: this.#model, values, maxRetries: 2 });
      for (const e of embeddings) {
        if (this.#dimension === 0) this.#dimension = e.length;
        if (e.length !== this.#dimension) throw new Error(`${this.id}: embedding of length ${e.length}, expected ${this.#dimension}`);
        out.push(normalise(Float32Array.from(e)));
      }
    }
    return out;
  }
}
