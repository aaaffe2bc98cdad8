// Answer times as the wire saw them: tcpdump on loopback records when each request left the client and when
// the server's answer left the server, so the time between them is the server's (its accept queue, its
// threads, the cores it was given), without the time the client took to read the answer. On a machine
// whose client shares the server's cores the client's own stalls reach 100 ms (docs/load.md), and a
// client-side figure cannot say whose they were. Needs tcpdump and the right to capture (root or
// CAP_NET_RAW); without them the capture says why it was skipped and the bench reports the client's times only.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request's time on the wire: from its first packet to the first packet of its answer. */
export interface WireAnswer {
  ms: number;
  /** The request's method and path (query left out), as far as the capture kept them. */
  request: string;
  /** The answer's HTTP status, read from its status line; 0 when the packet did not carry one. */
  status: number;
}

export interface WireCapture {
  /** Stops capturing and pairs every request with its answer, per connection. */
  stop(): Promise<WireAnswer[]>;
}

/** Headers to the TCP payload and 12 bytes of it ("HTTP/1.1 503"): Ethernet 14, IPv4 ≤ 60, TCP ≤ 60. */
const SNAPLEN = 160;

/** Starts capturing the payload-carrying TCP packets of `port` on loopback, or says why it cannot. */
export async function captureWire(port: number): Promise<WireCapture | { skipped: string }> {
  if (process.platform !== 'linux') return { skipped: `not Linux (${process.platform})` };
  if (spawnSync('tcpdump', ['--version']).error) return { skipped: 'tcpdump is not installed' };
  const dir = mkdtempSync(join(tmpdir(), 'wire-'));
  const file = join(dir, 'capture.pcap');
  // Only packets with a payload: the handshake's and the ACKs' would be most of the file.
  const filter = `tcp port ${port} and (((ip[2:2] - ((ip[0]&0xf)<<2)) - ((tcp[12]&0xf0)>>2)) != 0)`;
  const child = spawn('tcpdump', ['-i', 'lo', '-n', '-U', '-s', String(SNAPLEN), '-B', '65536', '-w', file, filter], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const started = await untilListening(child);
  if (started !== true) {
    rmSync(dir, { recursive: true, force: true });
    return { skipped: started };
  }
  return {
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
      try {
        return pairAnswers(readFileSync(file), port);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** true once tcpdump says it listens; what it said instead when it exits first. */
function untilListening(child: ChildProcess): Promise<true | string> {
  return new Promise((resolve) => {
    let said = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on')) resolve(true);
    });
    child.once('error', (error) => resolve(`tcpdump did not start: ${error.message}`));
    child.once('exit', (code) => resolve(`tcpdump exited (${code}): ${said.trim().split('\n').at(-1) ?? ''}`));
  });
}

/**
 * Reads a pcap file (microsecond or nanosecond stamps, Ethernet or Linux cooked frames, IPv4 and IPv6) and
 * pairs, on each connection, the first packet from the client after the last answer with the first packet
 * from the server after it: a client with one request in flight per connection, as the bench's. The
 * rest of a request or an answer (further segments) is passed over.
 */
export function pairAnswers(pcap: Buffer, serverPort: number): WireAnswer[] {
  if (pcap.length < 24) return [];
  const magic = pcap.readUInt32LE(0);
  const little = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  if (!little && pcap.readUInt32BE(0) !== 0xa1b2c3d4 && pcap.readUInt32BE(0) !== 0xa1b23c4d)
    throw new Error('not a pcap file (its magic number is unknown)');
  const u32 = (at: number): number => (little ? pcap.readUInt32LE(at) : pcap.readUInt32BE(at));
  const fractionDivisor = (little ? magic : pcap.readUInt32BE(0)) === 0xa1b23c4d ? 1e6 : 1e3; // ns or µs → ms
  const link = u32(20);
  const linkHeader = link === 1 ? 14 : link === 113 ? 16 : link === 0 ? 4 : -1;
  if (linkHeader < 0) throw new Error(`pcap link type ${link} is not read here (Ethernet, Linux cooked or loopback are)`);
  const asked = new Map<number, { ms: number; request: string }>(); // client port → its request, first seen
  const out: WireAnswer[] = [];
  for (let at = 24; at + 16 <= pcap.length;) {
    const ms = u32(at) * 1000 + u32(at + 4) / fractionDivisor;
    const caught = u32(at + 8);
    const frame = at + 16;
    at = frame + caught;
    const ip = frame + linkHeader;
    if (ip >= at) continue;
    const version = pcap[ip]! >> 4;
    let tcp: number;
    if (version === 4) {
      if (pcap[ip + 9] !== 6) continue;
      tcp = ip + (pcap[ip]! & 0xf) * 4;
    } else if (version === 6) {
      if (pcap[ip + 6] !== 6) continue;
      tcp = ip + 40;
    } else continue;
    if (tcp + 20 > at) continue;
    const from = pcap.readUInt16BE(tcp);
    const to = pcap.readUInt16BE(tcp + 2);
    const payload = tcp + (pcap[tcp + 12]! >> 4) * 4;
    if (to === serverPort) {
      if (!asked.has(from)) asked.set(from, { ms, request: pcap.toString('latin1', Math.min(payload, at), at).split(/[ ?]/, 2).join(' ') });
    } else if (from === serverPort) {
      const since = asked.get(to);
      if (since === undefined) continue;
      asked.delete(to);
      const line = payload + 12 <= at ? pcap.toString('latin1', payload, payload + 12) : '';
      const status = /^HTTP\/1\.[01] (\d{3})$/.exec(line)?.[1];
      out.push({ ms: ms - since.ms, request: since.request, status: status ? Number(status) : 0 });
    }
  }
  return out;
}
