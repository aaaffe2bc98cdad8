#!/usr/bin/env node
// `npm run build` (run by `npm pack` through prepack): dist/ from the runtime sources. tsc compiles the
// TypeScript (tsconfig.build.json); files of any other kind beside the sources (a page, a JSON schema)
// are copied to the same place under dist/, so code that finds them relative to its own module finds
// them from the build as from the sources.
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOTS = ['server', 'tools', 'storage', 'bridge', 'extract'];
const root = new URL('..', import.meta.url).pathname;
rmSync(join(root, 'dist'), { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (run.status !== 0) process.exit(run.status ?? 1);

let copied = 0;
const walk = (rel) => {
  for (const name of readdirSync(join(root, rel))) {
    const path = join(rel, name);
    if (statSync(join(root, path)).isDirectory()) walk(path);
    else if (!name.endsWith('.ts')) {
      cpSync(join(root, path), join(root, 'dist', path));
      copied++;
    }
  }
};
for (const dir of ROOTS) walk(dir);
console.log(`dist/ built${copied ? `, ${copied} non-TypeScript file(s) copied beside the output` : ''}`);
