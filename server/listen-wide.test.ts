import { createServer } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { listenWide } from './listen-wide.ts';

/** One request on a fresh connection; its answer's body. */
function ask(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
    socket.on('error', reject);
    socket.end('GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
  });
}

describe('listenWide', () => {
  it.runIf(process.platform === 'linux')(
    'listens on several sockets of one port, and the one HTTP server answers every connection',
    async () => {
      let answered = 0;
      const server = createServer((_req, res) => res.end(`answer ${++answered}`));
      const wide = await listenWide(server, { port: 0, host: '127.0.0.1', backlog: 64, sockets: 4 });
      try {
        // Node ≥ 22.12 binds the three extra sockets; an older one listens once, as before.
        expect([0, 3]).toContain(wide.extra.length);
        const port = (server.address() as AddressInfo).port;
        for (const l of wide.extra) expect((l.address() as AddressInfo).port).toBe(port);
        const answers = await Promise.all(Array.from({ length: 40 }, () => ask(port)));
        expect(new Set(answers).size).toBe(40);
        expect(answered).toBe(40);
      } finally {
        wide.close();
        await new Promise((r) => server.close(r));
      }
    },
  );

  it('refuses a port another process holds, with EADDRINUSE, instead of sharing it', async () => {
    const other = createNetServer();
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as AddressInfo).port;
    try {
      for (const sockets of [1, 4]) {
        const server = createServer();
        await expect(listenWide(server, { port, host: '127.0.0.1', backlog: 64, sockets })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      }
    } finally {
      await new Promise((r) => other.close(r));
    }
  });
});
