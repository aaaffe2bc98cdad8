// Where each operation's fields travel over HTTP: the query or the body, and which are path segments.
// Both doors name a failed field the same way (`["query", "as_of"]`), and the MCP door must not lean on
// the REST door's route table to do so, so the fact lives here; a test holds bridge/routes.ts to it.
import type { Locator, Source } from './error-body.ts';

export interface InputSource {
  from: 'query' | 'body';
  /** Fields taken from path segments, e.g. `id` of `/v1/memories/{id}`. */
  path: readonly string[];
}

export const inputSources: Readonly<Record<string, InputSource>> = {
  remember: { from: 'body', path: [] },
  list_memories: { from: 'query', path: [] },
  get_memory: { from: 'query', path: ['id'] },
  search_memory: { from: 'body', path: [] },
  why: { from: 'query', path: ['id'] },
  declare_fact: { from: 'body', path: [] },
  resolve_fact: { from: 'body', path: [] },
  export_ledger: { from: 'query', path: [] },
  invalidate_memory: { from: 'body', path: ['id'] },
  list_spaces: { from: 'query', path: [] },
};

/** The locator of an operation's fields; an operation not listed takes its fields from a JSON body. */
export function locatorOf(operation: string): Locator {
  const source = inputSources[operation] ?? { from: 'body', path: [] };
  return (field): Source => (typeof field === 'string' && source.path.includes(field) ? 'path' : source.from);
}
