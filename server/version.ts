import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

export const SERVICE_NAME = pkg.name;
export const SERVICE_VERSION = pkg.version;
/** The export archive's own format version. */
export { BUNDLE_FORMAT_VERSION as BUNDLE_VERSION } from '../storage/bundle/rows.ts';
