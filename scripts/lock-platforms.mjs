#!/usr/bin/env node
// Records in package-lock.json the per-platform native packages that npm left out, so `npm ci` on macOS,
// Windows and arm64 Linux installs their binding too. npm writes a lock entry only for a version the
// registry serves when the lock is made; the registry this project is built against serves
// @lancedb/lancedb-<platform>@0.37.1 for linux-x64 alone, and npm then silently drops the other platforms.
// An added entry names the exact version the parent pins, with the os/cpu/libc its napi target implies,
// and no integrity (npm records that when the package is first fetched; nothing here was downloaded).
// Usage, after any `npm install --package-lock-only`: node scripts/lock-platforms.mjs [--check]
import { readFileSync, writeFileSync } from 'node:fs';

/** napi-rs package suffixes and the platform each one installs on. */
const TARGETS = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'win32-x64-msvc': { os: ['win32'], cpu: ['x64'] },
  'win32-arm64-msvc': { os: ['win32'], cpu: ['arm64'] },
};
/** Parents whose platform packages are checked (those with bindings published per platform). */
const PARENTS = ['@lancedb/lancedb'];

const check = process.argv.includes('--check');
const lockPath = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const added = [];
for (const parent of PARENTS) {
  const entry = lock.packages[`node_modules/${parent}`];
  if (!entry) continue;
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const suffix = Object.keys(TARGETS).find((s) => name === `${parent}-${s}`);
    if (!suffix || lock.packages[`node_modules/${name}`]) continue;
    if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`${parent} asks for ${name}@${version}: not an exact version`);
    const { os, cpu, libc } = TARGETS[suffix];
    // Keys in the order npm writes them, so its next rewrite of the lock changes nothing.
    lock.packages[`node_modules/${name}`] = {
      version,
      cpu,
      ...(libc ? { libc } : {}),
      ...(entry.license ? { license: entry.license } : {}),
      optional: true,
      os,
      ...(entry.engines ? { engines: entry.engines } : {}),
    };
    added.push(`${name}@${version}`);
  }
}
if (check) {
  if (added.length > 0) {
    console.error(`package-lock.json lacks ${added.join(', ')}: run node scripts/lock-platforms.mjs`);
    process.exit(1);
  }
  console.log('package-lock.json records every platform package');
} else {
  const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b, 'en')));
  lock.packages = sorted;
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(added.length > 0 ? `added ${added.join(', ')}` : 'nothing to add');
}
