import { existsSync, readFileSync } from 'node:fs';

// From the sources (server/version.ts) and from the build (dist/server/version.js) alike, the nearest
// package.json above this file is the project's own.
const pkgUrl = ['../package.json', '../../package.json'].map((rel) => new URL(rel, import.meta.url)).find((url) => existsSync(url));
if (!pkgUrl) throw new Error('memory-ledger: package.json not found beside the sources or the build');
const pkg = JSON.parse(readFileSync(pkgUrl, 'utf8')) as { name: string; version: string };

export const SERVICE_NAME = pkg.name;
export const SERVICE_VERSION = pkg.version;
/** The export archive's own format version. */
export { BUNDLE_FORMAT_VERSION as BUNDLE_VERSION } from '../storage/bundle/rows.ts';
