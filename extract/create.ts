// Chooses the extractor from SVC_EXTRACTOR (`local` or `openai:<model>`) and says, for check_install,
// what it is. The model is not called at start-up: a server must start with the network closed. The
// model client (the AI SDK: ~0.1 s of the ~1.8 s of CPU a start takes) is imported only when one is configured.
import { createLocalExtractor } from './local.ts';
import type { Extractor } from './types.ts';

export interface ExtractorSetting {
  extractor: string;
  openaiBaseUrl?: string | undefined;
  openaiApiKey?: string | undefined;
}

export async function createExtractor(setting: ExtractorSetting): Promise<{ extractor: Extractor; detail: string }> {
  if (setting.extractor.startsWith('openai:')) {
    const model = setting.extractor.slice('openai:'.length);
    const { createOpenAIExtractor } = await import('./openai.ts');
    const extractor = createOpenAIExtractor({ model, baseURL: setting.openaiBaseUrl, apiKey: setting.openaiApiKey });
    return {
      extractor,
      detail: `${extractor.id} via ${setting.openaiBaseUrl ?? 'https://api.openai.com/v1'} (chat completions, structured output)`,
    };
  }
  return { extractor: createLocalExtractor(), detail: 'local: offline rule-based extraction' };
}
