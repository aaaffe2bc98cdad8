// `npm run bench [-- --only NAME] [--scale F]`: runs the benchmark sections and prints one table.
// Targets are checked here, on a quiet machine, never in timed unit tests.
import { table } from './lib/stats.ts';
import { sections } from './bench/sections.ts';
import type { BenchRow } from './bench/section.ts';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = opt('--only')?.split(',');
const scale = Number(opt('--scale') ?? '1');

const rows: (BenchRow & { section: string })[] = [];
for (const s of sections) {
  if (only && !only.includes(s.name)) continue;
  console.error(`bench: ${s.name} ...`);
  const t0 = performance.now();
  for (const r of await s.run({ scale })) rows.push({ ...r, section: s.name });
  console.error(`bench: ${s.name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
console.log(
  table(
    ['section', 'metric', 'value', 'target', 'met', 'note'],
    rows.map((r) => [r.section, r.metric, r.value, r.target, r.met === null ? '' : r.met ? 'yes' : 'NO', r.note ?? '']),
  ),
);
