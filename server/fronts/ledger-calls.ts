// An HTTP thread's calls to the ledger thread (./protocol.ts), one message each way; a call whose client
// goes away is cancelled there too.
import type { MessagePort } from 'node:worker_threads';
import type { FrontCall, FrontCancel, FrontReply } from './protocol.ts';

type Call = FrontCall extends infer C ? (C extends { id: number } ? Omit<C, 'id'> : never) : never;

export class LedgerCalls {
  #next = 1;
  readonly #waiting = new Map<number, (reply: FrontReply) => void>();

  constructor(readonly port: MessagePort) {
    port.on('message', (reply: FrontReply) => {
      const settle = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      settle?.(reply);
    });
  }

  call(call: Call, signal: AbortSignal): Promise<FrontReply> {
    const id = this.#next++;
    return new Promise((resolve) => {
      try {
        this.port.postMessage({ ...call, id } as FrontCall);
      } catch {
        // An input the structured clone cannot carry (nested past its stack, e.g. a 100k-deep array) goes on
        // whole as text, and the door on the ledger thread answers it as it answers any bad input.
        return resolve({ id, kind: 'forward' });
      }
      this.#waiting.set(id, resolve);
      if (signal.aborted) this.#cancel(id);
      else signal.addEventListener('abort', () => this.#cancel(id), { once: true });
    });
  }

  #cancel(id: number): void {
    if (this.#waiting.has(id)) this.port.postMessage({ id, cancel: true } satisfies FrontCancel);
  }
}
