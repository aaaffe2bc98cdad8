// An HTTP thread's request listener: operation requests are counted across the threads from arrival,
// before anything of them is read, and refused at once past SVC_MAX_REQUESTS, or for a REST search when
// both search lanes would refuse it (their states kept by the ledger thread, tools/search-gate.ts), as the
// ledger thread refuses them (server/refusals.ts); the rest are answered here (./front-answers.ts) or
// passed on.
import type { RequestListener, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { SvcError } from '../../tools/errors.ts';
import { gateStates, searchRefusal } from '../../tools/search-gate.ts';
import { overloaded } from '../../tools/slot-pool.ts';
import { tenantResolver } from '../auth.ts';
import { mcpRefusal, plainRefusal } from '../refusals.ts';
import { answeredHere, frontAnswers, type FrontSettings } from './front-answers.ts';
import type { LedgerCalls } from './ledger-calls.ts';
import type { PassOn } from './pass-on.ts';
import { FRONT_COUNTS, type FrontData } from './protocol.ts';

export function frontListener(
  data: FrontSettings & Pick<FrontData, 'maxRequests' | 'inside' | 'searchOperations' | 'gate' | 'gateTenants'>,
  calls: Pick<LedgerCalls, 'call'>,
  passOn: Pick<PassOn, 'read' | 'raw'>,
): RequestListener {
  // One resolver of keys for the search gate here and the answer: a key is hashed and matched once.
  const tenantOf = tenantResolver(data);
  const answer = getRequestListener(frontAnswers(data, calls, passOn, tenantOf));
  const inside = new Int32Array(data.inside);
  const over = (): SvcError => overloaded(`${data.maxRequests} requests are in flight, the most this server takes at once`, 1);
  // An MCP refusal names the call's JSON-RPC id, so a small body is read for it.
  const refuseMcp = getRequestListener((request) => mcpRefusal(request, over()));
  const searches = new Set(data.searchOperations);
  const gate = new Int32Array(data.gate);
  const gateAt = new Map(data.gateTenants.map((t, i) => [t, i]));
  /** Why a search is refused before it is read; null: it is read (a request without a known key is answered 401 there). */
  const searchRefused = (authorization: string | undefined): SvcError | null => {
    const tenant = tenantOf(authorization);
    return tenant === null ? null : searchRefusal(...gateStates(gate, gateAt.get(tenant)));
  };
  const refuse = (res: ServerResponse, error: SvcError): void => {
    const refused = plainRefusal(error);
    res.writeHead(refused.status, refused.headers).end(refused.body);
  };
  return (req, res) => {
    const route = answeredHere(data.routes, req.method, req.url);
    if (!route) return passOn.raw(req, res);
    const count = Atomics.add(inside, FRONT_COUNTS.requests, 1) + 1;
    res.once('close', () => Atomics.sub(inside, FRONT_COUNTS.requests, 1));
    if (count > data.maxRequests) return route === 'mcp' ? void refuseMcp(req, res) : refuse(res, over());
    const refusal = route !== 'mcp' && searches.has(route.operation) ? searchRefused(req.headers.authorization) : null;
    if (refusal) return refuse(res, refusal);
    void answer(req, res);
  };
}
