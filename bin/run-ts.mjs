#!/usr/bin/env node
// Runs a TypeScript entry point (evals, benchmarks) with tsx's loader: `node bin/run-ts.mjs FILE [ARGS]`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bin/run-ts.mjs FILE [ARGS]');
  process.exit(2);
}
process.argv = [process.argv[0] ?? 'node', resolve(file), ...rest];
await import(pathToFileURL(resolve(file)).href);
