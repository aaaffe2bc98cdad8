import { describe, expect, it } from 'vitest';
import { pairAnswers } from './wire-times.ts';

const SERVER = 8080;

/** One Ethernet + IPv4 + TCP frame (20-byte headers, no options) carrying `payload`, at `us` microseconds. */
function frame(us: number, from: number, to: number, payload: string): Buffer {
  const body = Buffer.from(payload, 'latin1');
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(40 + body.length, 2);
  ip[9] = 6;
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(from, 0);
  tcp.writeUInt16BE(to, 2);
  tcp[12] = 5 << 4;
  const packet = Buffer.concat([Buffer.alloc(14), ip, tcp, body]);
  const record = Buffer.alloc(16);
  record.writeUInt32LE(Math.floor(us / 1e6), 0);
  record.writeUInt32LE(us % 1e6, 4);
  record.writeUInt32LE(packet.length, 8);
  record.writeUInt32LE(packet.length, 12);
  return Buffer.concat([record, packet]);
}

function pcap(...frames: Buffer[]): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(1, 20);
  return Buffer.concat([header, ...frames]);
}

describe('answer times on the wire', () => {
  it('pairs each request with the first packet of its answer, per connection, and reads its status', () => {
    const answers = pairAnswers(
      pcap(
        frame(1_000_000, 40001, SERVER, 'GET /v1/memories HTTP/1.1\r\n'),
        frame(1_000_500, 40002, SERVER, 'POST /v1/search HTTP/1.1\r\n'),
        frame(1_000_700, 40002, SERVER, '{"query":"rest of the body"}'), // the same request's next segment
        frame(1_003_000, SERVER, 40002, 'HTTP/1.1 503 Service Unavailable\r\n'),
        frame(1_004_000, SERVER, 40002, 'more of the same answer'),
        frame(1_012_000, SERVER, 40001, 'HTTP/1.1 200 OK\r\n'),
        frame(1_020_000, 40001, SERVER, 'GET /v1/memories?space=user%3A1 HTTP/1.1\r\n'), // the connection's next request
        frame(1_020_250, SERVER, 40001, 'HTTP/1.1 429 Too Many Requests\r\n'),
      ),
      SERVER,
    );
    expect(answers).toEqual([
      { ms: 2.5, request: 'POST /v1/search', status: 503 },
      { ms: 12, request: 'GET /v1/memories', status: 200 },
      { ms: 0.25, request: 'GET /v1/memories', status: 429 },
    ]);
  });

  it('passes over an answer with no request before it, and a packet without a status line', () => {
    const answers = pairAnswers(
      pcap(
        frame(5_000_000, SERVER, 40003, 'HTTP/1.1 200 OK\r\n'),
        frame(5_001_000, 40003, SERVER, 'x'),
        frame(5_002_000, SERVER, 40003, 'y'),
      ),
      SERVER,
    );
    expect(answers).toEqual([{ ms: 1, request: 'x', status: 0 }]);
  });

  it('refuses a file that is not a capture', () => {
    expect(() => pairAnswers(Buffer.alloc(40, 7), SERVER)).toThrow(/not a pcap file/);
  });
});
