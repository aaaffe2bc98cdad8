// The operation registry: both doors (REST routes and MCP tools) are generated from this list.
import { exportLedger } from './export-ledger.ts';
import { getMemory } from './get-memory.ts';
import { listMemories } from './list-memories.ts';
import type { AnyOperation } from './operation.ts';
import { remember } from './remember.ts';
import { searchMemory } from './search-memory.ts';

export const operations: readonly AnyOperation[] = [
  remember,
  listMemories,
  getMemory,
  searchMemory,
  exportLedger,
];

export function operationNamed(name: string): AnyOperation {
  const op = operations.find((o) => o.name === name);
  if (!op) throw new Error(`no operation named ${name}`);
  return op;
}
