// The sections `npm run bench` runs, in order. Each capability adds its own file and one line here.
import type { BenchSection } from './section.ts';
import { core } from './core.ts';
import { facts } from './facts.ts';
import { mcp } from './mcp.ts';

export const sections: BenchSection[] = [core, facts, mcp];
