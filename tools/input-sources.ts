// Where each operation's fields travel over HTTP: the query or the body, and which are path segments.
// Both doors name a failed field the same way (`["query", "as_of"]`); the fact is each operation's
// `rest` binding, so the MCP door reads it from the operation list, not from the REST door's routes.
import type { Locator, Source } from './error-body.ts';
import { operations } from './index.ts';
import { pathFields } from './operation.ts';

/** The locator of an operation's fields; an operation not listed takes its fields from a JSON body. */
export function locatorOf(operation: string): Locator {
  const rest = operations.find((o) => o.name === operation)?.rest;
  const from: Source = rest?.from ?? 'body';
  const path = rest ? pathFields(rest) : [];
  return (field): Source => (typeof field === 'string' && path.includes(field) ? 'path' : from);
}
