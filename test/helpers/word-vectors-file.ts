// A WVEC1 file as bin/word-vectors.mjs writes it, from hand-made vectors: tests build tiny word lists with it.
export function wvec(entries: [string, number[]][]): Buffer {
  const dims = entries[0]![1].length;
  const words = Buffer.from(entries.map(([w]) => w).join('\n'), 'utf8');
  const head = Buffer.alloc(18);
  head.write('WVEC1\n', 0, 'latin1');
  head.writeUInt32LE(entries.length, 6);
  head.writeUInt32LE(dims, 10);
  head.writeUInt32LE(words.length, 14);
  return Buffer.concat([head, words, Buffer.from(Int8Array.from(entries.flatMap(([, v]) => v)).buffer)]);
}
