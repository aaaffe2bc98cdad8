// The ledger thread's side of an HTTP thread's calls (./protocol.ts): each call is counted in flight, run by
// `runOperation` in a context of its own, and answered as the door that took it would answer it, so a
// request through an HTTP thread gets the same status, body and refusal as one this thread reads itself.
import type { MessagePort } from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';
import { locateIn } from '../../bridge/rest-input.ts';
import { errorAnswer, errorDetail } from '../../tools/error-body.ts';
import type { Context, Services } from '../../tools/context.ts';
import { operationNamed } from '../../tools/index.ts';
import { runOperation } from '../../tools/operation.ts';
import type { Ledger } from '../../storage/log/ledger.ts';
import { errorResult } from '../mcp/errors.ts';
import { callOperation } from '../mcp/tools.ts';
import type { FrontCall, FrontCancel, FrontReply } from './protocol.ts';

/** The ledger and services answering now; null while this process does not hold the ledger. */
export type Answering = () => { ledger: Ledger; services: Services } | null;

export function answerCalls(port: MessagePort | Worker, answering: Answering): void {
  const running = new Map<number, AbortController>();
  const reply = (message: FrontReply): void => port.postMessage(message);

  const answer = async (call: FrontCall): Promise<void> => {
    const own = answering();
    if (!own) return reply({ id: call.id, kind: 'forward' });
    const op = operationNamed(call.operation);
    const controller = new AbortController();
    running.set(call.id, controller);
    const ctx: Context = {
      ledger: own.ledger,
      tenant: call.tenant,
      confinedSpace: call.door === 'mcp' ? call.confinedSpace : undefined,
      services: own.services,
      signal: controller.signal,
    };
    let arrived;
    try {
      // The early refusal, as the door applies it to a request read here: the ceiling on requests in
      // flight, and for a REST route heavy whatever its input (why), a heavy queue that would refuse it anyway.
      arrived = own.services.admission?.arrive(
        call.door === 'rest' && op.heavy === 'always',
        call.door === 'rest' && op.searchSlot === true,
        call.tenant,
      );
    } catch (error) {
      running.delete(call.id);
      const refused = errorAnswer(error, () => 'body');
      return reply(
        call.door === 'rest'
          ? { id: call.id, kind: 'rest', status: refused.status, body: JSON.stringify(refused.body), retryAfter: refused.retryAfter }
          : { id: call.id, kind: 'mcp', result: JSON.stringify(errorResult(op, error, call.args)), retryAfter: refused.retryAfter },
      );
    }
    try {
      if (call.door === 'mcp') return reply({ id: call.id, kind: 'mcp', result: JSON.stringify(await callOperation(op, call.args, ctx)) });
      try {
        const result = await runOperation(op, call.input, ctx);
        reply({ id: call.id, kind: 'rest', status: 200, body: JSON.stringify(result) });
      } catch (error) {
        const e = errorAnswer(error, locateIn(call.pathFields, call.from), call.input);
        reply({ id: call.id, kind: 'rest', status: e.status, body: JSON.stringify(e.body), retryAfter: e.retryAfter });
      }
    } finally {
      arrived?.release();
      running.delete(call.id);
    }
  };

  // A failure outside the operation (a bug) still answers, as the doors' own error handler would: an HTTP
  // thread never waits for a reply that will not come.
  const failed = (call: FrontCall, error: unknown): void => {
    console.error('unhandled error:', error);
    if (call.door === 'rest')
      reply({ id: call.id, kind: 'rest', status: 500, body: JSON.stringify(errorDetail('internal', 'the server failed to answer')) });
    else reply({ id: call.id, kind: 'mcp', result: JSON.stringify(errorResult(operationNamed(call.operation), error, call.args)) });
  };

  port.on('message', (message: FrontCall | FrontCancel) => {
    if ('cancel' in message) running.get(message.id)?.abort();
    else answer(message).catch((error: unknown) => failed(message, error));
  });
}
