// The REST route table, derived from the operation list: each operation's `rest` binding names its
// method, path and where its input comes from. Path, query and body are mapped separately onto the
// operation's one input schema; nothing else is read.
import type { Context } from '../tools/context.ts';
import { operations } from '../tools/index.ts';
import type { RestBinding } from '../tools/operation.ts';
import { archiveResponse } from './archive-response.ts';

export interface RestRoute {
  method: RestBinding['method'];
  /** Segments; `:name` takes one percent-decoded path segment (ids may hold `/` as %2F). */
  path: string;
  operation: string;
  from: RestBinding['from'];
  /** Turns the operation's result into a response other than JSON (the export archive). */
  respond?: (result: unknown, ctx: Context) => Response | Promise<Response>;
}

const answers: Record<NonNullable<RestBinding['answer']>, NonNullable<RestRoute['respond']>> = { archive: archiveResponse };

export const routes: readonly RestRoute[] = operations.map(({ name, rest }) => {
  const route: RestRoute = { method: rest.method, path: rest.path, operation: name, from: rest.from };
  if (rest.answer) route.respond = answers[rest.answer];
  return route;
});
