// Listening for a burst of new connections. libuv (Node 20 and later) accepts one connection per turn of
// the event loop (libuv/libuv#3696), so while the loop is busy, say 300 ms a turn under overload, a
// burst of 1,024 connections opened at once is accepted over minutes, and the last ones time out at the
// client without the server having seen them (docs/load.md). On Linux, `sockets` listening sockets bound
// to the same port with SO_REUSEPORT each accept one connection a turn, and the kernel spreads incoming
// connections over them; each hands its connections to the one HTTP server, which answers them all.
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server } from 'node:http';

export interface ListenOptions {
  port: number;
  host: string;
  backlog: number;
  /** Listening sockets on the port (1: a plain listen). More than 1 needs SO_REUSEPORT (Linux, Node ≥ 22.12). */
  sockets: number;
  /**
   * Whether to refuse a port another process holds (a plain bind tried first; default true). False for
   * the second and later HTTP threads of this process, which join the sockets the first one bound.
   */
  probe?: boolean;
}

/** Binds a plain socket to the port and closes it: an error (EADDRINUSE) when another process holds it. */
function probe(port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen({ port, host, exclusive: true }, () => s.close(() => resolve()));
  });
}

/**
 * Listens as `server.listen` would; with `sockets` > 1, on that many sockets of one port. A port another
 * process holds is refused as before (a plain bind is tried first), so two servers never share a port.
 * Returns the extra listeners (closed by `close`).
 */
export async function listenWide(server: Server, opts: ListenOptions): Promise<{ extra: NetServer[]; close: () => void }> {
  const wide = opts.sockets > 1 && process.platform === 'linux';
  if (wide && opts.port !== 0 && opts.probe !== false) await probe(opts.port, opts.host);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: opts.host, backlog: opts.backlog, reusePort: wide }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const extra: NetServer[] = [];
  if (wide) {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : opts.port;
    const handOver = (socket: Socket): void => {
      server.emit('connection', socket);
    };
    for (let i = 1; i < opts.sockets; i++) {
      const listener = createNetServer(handOver);
      const bound = await new Promise<boolean>((resolve) => {
        listener.once('error', () => resolve(false));
        listener.listen({ port, host: opts.host, backlog: opts.backlog, reusePort: true }, () => resolve(true));
      });
      // A Node without reusePort (before 22.12) cannot bind a second socket: one listener, as before.
      if (!bound) break;
      // Later errors (EMFILE on accept) are the server's, handled where its own are.
      listener.on('error', (error) => server.emit('error', error));
      extra.push(listener);
    }
  }
  return {
    extra,
    close: () => {
      for (const l of extra) l.close();
    },
  };
}
