// `memory-ledger pull BASE_URL DIR [--as-of T] [--space S] [--category C]` and
// `memory-ledger push DIR BASE_URL [--granularity exact|day] [--no-diff]`; the key comes from SVC_API_KEY.
import { parseArgs } from 'node:util';
import { knowledgeInstantProblem } from '../storage/time.ts';
import { pull, push, SyncError } from './sync.ts';
import type { CliIo } from './bundle-cli.ts';
import { SYNC_USAGE } from './cli-usage.ts';

export { SYNC_USAGE };

const defaultIo: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

function usage(io: CliIo, message: string): number {
  io.err(`${message}\n${SYNC_USAGE}\n`);
  return 2;
}

function baseUrlProblem(text: string): string | null {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'BASE_URL must be http(s)';
  } catch {
    return `BASE_URL is not a URL: ${text}`;
  }
}

export async function runSyncCli(
  command: 'pull' | 'push',
  args: string[],
  io: CliIo = defaultIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        'as-of': { type: 'string' },
        space: { type: 'string' },
        category: { type: 'string' },
        granularity: { type: 'string' },
        'no-diff': { type: 'boolean' },
      },
    });
  } catch (error) {
    return usage(io, `${command}: ${(error as Error).message}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 2) return usage(io, `${command}: expected two arguments`);
  const apiKey = env.SVC_API_KEY || undefined;
  try {
    if (command === 'pull') {
      const [base = '', dir = ''] = positionals;
      const bad = baseUrlProblem(base);
      if (bad) return usage(io, `pull: ${bad}`);
      if (values['as-of'] !== undefined && knowledgeInstantProblem(values['as-of']) !== null)
        return usage(io, `pull: --as-of is not an instant with an offset or a date: ${values['as-of']}`);
      const r = await pull(base, dir, { apiKey, asOf: values['as-of'], space: values.space, category: values.category });
      io.out(
        `${JSON.stringify({ dir, bytes: r.bytes, exported_as_of: r.manifest.exported_as_of, namespace: r.manifest.namespace, counts: r.manifest.counts }, null, 2)}\n`,
      );
      return 0;
    }
    const [dir = '', base = ''] = positionals;
    const bad = baseUrlProblem(base);
    if (bad) return usage(io, `push: ${bad}`);
    const granularity = values.granularity ?? 'exact';
    if (granularity !== 'exact' && granularity !== 'day') return usage(io, `push: --granularity must be exact or day`);
    const report = await push(dir, base, { apiKey, granularity, diff: !values['no-diff'] });
    io.out(`${JSON.stringify(report, null, 2)}\n`);
    return report.refused.length === 0 ? 0 : 1;
  } catch (error) {
    io.err(`${command}: ${error instanceof SyncError ? error.message : (error as Error).message}\n`);
    return 1;
  }
}
