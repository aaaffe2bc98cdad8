#!/usr/bin/env node
// An installed package runs the JavaScript build (dist/), with no TypeScript tooling at run time. A source
// checkout (server/cli.ts is beside us; the package ships no .ts) runs the sources through tsx, a
// devDependency, so `npm start` and the tests always run what was just edited and never a stale dist/.
import { existsSync } from 'node:fs';

const sources = new URL('../server/cli.ts', import.meta.url);
if (existsSync(sources)) {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    console.error('memory-ledger: this is a source checkout and tsx is missing: run `npm ci` (with devDependencies) first');
    process.exit(1);
  }
  register();
  await import(sources.href);
} else {
  await import('../dist/server/cli.js');
}
