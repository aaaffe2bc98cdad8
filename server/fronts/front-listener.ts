// An HTTP thread's request listener: operation requests are counted across the threads from arrival,
// before anything of them is read, and refused at once past SVC_MAX_REQUESTS, or for a REST search when
// the ledger thread says the queues a search may wait in are full (FRONT_COUNTS.searchesCrowdedFor), as the
// ledger thread's own listener refuses (server/refusals.ts); the rest are answered here (./front-answers.ts)
// or passed on.
import type { RequestListener, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { SvcError } from '../../tools/errors.ts';
import { overloaded, searchesCrowded } from '../../tools/slot-pool.ts';
import { mcpRefusal, plainRefusal } from '../refusals.ts';
import { answeredHere, frontAnswers, type FrontSettings } from './front-answers.ts';
import type { LedgerCalls } from './ledger-calls.ts';
import type { PassOn } from './pass-on.ts';
import { FRONT_COUNTS, type FrontData } from './protocol.ts';

export function frontListener(
  data: FrontSettings & Pick<FrontData, 'maxRequests' | 'inside' | 'searchOperations'>,
  calls: Pick<LedgerCalls, 'call'>,
  passOn: Pick<PassOn, 'read' | 'raw'>,
): RequestListener {
  const answer = getRequestListener(frontAnswers(data, calls, passOn));
  const inside = new Int32Array(data.inside);
  const over = (): SvcError => overloaded(`${data.maxRequests} requests are in flight, the most this server takes at once`, 1);
  // An MCP refusal names the call's JSON-RPC id, so a small body is read for it.
  const refuseMcp = getRequestListener((request) => mcpRefusal(request, over()));
  const searches = new Set(data.searchOperations);
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
    const crowdedFor = route !== 'mcp' && searches.has(route.operation) ? Atomics.load(inside, FRONT_COUNTS.searchesCrowdedFor) : 0;
    if (crowdedFor > 0) return refuse(res, searchesCrowded(crowdedFor));
    void answer(req, res);
  };
}
