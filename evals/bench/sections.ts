// The sections `npm run bench` runs, in order. Each capability adds its own file and one line here.
import type { BenchSection } from './section.ts';

export const sections: BenchSection[] = [];
