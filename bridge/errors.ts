// SvcError → HTTP, in one place. Validation failures use the standard 422 shape with `loc` naming the
// field from its source (`["body", "space"]`); a bad timestamp in a query parameter is 400.
import { SvcError, type FieldIssue } from '../tools/errors.ts';

export type Source = 'body' | 'query' | 'path';

export interface HttpError {
  status: number;
  body: unknown;
}

const STATUS: Record<SvcError['code'], number> = {
  SVC_AS_OF_REQUIRED: 400,
  SVC_BAD_TIMESTAMP: 400,
  SVC_UNAUTHORIZED: 401,
  invalid_input: 422,
  invalid_json: 400,
  payload_too_large: 413,
  not_found: 404,
  append_only: 501,
  unavailable: 503,
  internal: 500,
};

export function httpError(error: unknown, sourceOf: (field: string | number | undefined) => Source): HttpError {
  if (!(error instanceof SvcError)) {
    console.error('internal error:', error);
    return { status: 500, body: { detail: { error: 'internal', why: 'the server failed to answer; nothing was written by this request unless it was acknowledged' } } };
  }
  if (error.code === 'invalid_input') {
    const located: FieldIssue[] = error.issues.map((i) => ({ ...i, loc: [sourceOf(i.loc[0]), ...i.loc] }));
    const badQueryTime = located.find((i) => i.type === 'timestamp' && i.loc[0] === 'query');
    if (badQueryTime) {
      return { status: 400, body: { detail: { error: 'SVC_BAD_TIMESTAMP', why: `${badQueryTime.loc.slice(1).join('.')}: ${badQueryTime.msg}`, loc: badQueryTime.loc } } };
    }
    return { status: 422, body: { detail: located } };
  }
  return { status: STATUS[error.code], body: { detail: { error: error.code, why: error.message } } };
}
