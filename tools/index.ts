// The operation registry: both doors (REST routes and MCP tools) are generated from this list.
import { declareFact } from './declare-fact.ts';
import { exportLedger } from './export-ledger.ts';
import { getMemory } from './get-memory.ts';
import { invalidateMemory } from './invalidate-memory.ts';
import { listSpaces } from './list-spaces.ts';
import { listMemories } from './list-memories.ts';
import { heavyName, type AnyOperation } from './operation.ts';
import { remember } from './remember.ts';
import { resolveFact } from './resolve-fact.ts';
import { searchMemory } from './search-memory.ts';
import { why } from './why.ts';

export const operations: readonly AnyOperation[] = [
  remember,
  listMemories,
  getMemory,
  searchMemory,
  why,
  declareFact,
  resolveFact,
  exportLedger,
  invalidateMemory,
  listSpaces,
];

/** How the start-up line names the operations that can take a heavy slot. */
export const heavyOperationNames: readonly string[] = operations.filter((op) => op.heavy !== undefined).map(heavyName);

export function operationNamed(name: string): AnyOperation {
  const op = operations.find((o) => o.name === name);
  if (!op) throw new Error(`no operation named ${name}`);
  return op;
}
