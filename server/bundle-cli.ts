// `memory-ledger bundle FILE list|get ID|why ID|verify`: reads an export bundle (.tar.gz or an unpacked
// folder) offline and answers as the server would at the same as_of, as JSON on stdout.
import { parseArgs } from 'node:util';
import { BundleQueryError, bundleGet, bundleList, bundleWhy } from '../storage/bundle/queries.ts';
import { loadBundle, withBundleFolder } from '../storage/bundle/reader.ts';
import { BundleRowError } from '../storage/bundle/rows.ts';
import { verifyBundleFolder } from '../storage/bundle/verify.ts';
import { parseInstant, parseKnowledgeInstant, type Micros } from '../storage/time.ts';
import { BUNDLE_USAGE } from './cli-usage.ts';

export { BUNDLE_USAGE };

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const defaultIo: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

class UsageError extends Error {}

function instantFlag(name: string, value: string | undefined, parse: (t: string) => Micros): Micros | undefined {
  if (value === undefined) return undefined;
  try {
    return parse(value);
  } catch {
    throw new UsageError(`--${name}: not an ISO 8601 instant with an offset${name === 'as-of' ? ' or a date' : ''}: ${value}`);
  }
}

function intFlag(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name}: expected a whole number of at least ${min}: ${value}`);
  return n;
}

/** Runs the command; the exit code is returned, output goes through `io`. */
export async function runBundleCli(args: string[], io: CliIo = defaultIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        'as-of': { type: 'string' },
        'valid-at': { type: 'string' },
        space: { type: 'string' },
        kind: { type: 'string' },
        category: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        depth: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      io.out(`${BUNDLE_USAGE}\n`);
      return 0;
    }
    const [file, action, id, ...extra] = positionals;
    if (!file || !action) throw new UsageError('a bundle FILE and an action are needed');
    const needsId = action === 'get' || action === 'why';
    if (!['list', 'get', 'why', 'verify'].includes(action)) throw new UsageError(`unknown action "${action}"`);
    if (needsId && !id) throw new UsageError(`${action} needs an ID`);
    if ((!needsId && id !== undefined) || extra.length > 0) throw new UsageError(`unexpected argument "${needsId ? extra[0] : id}"`);
    if (action === 'verify') {
      const report = await withBundleFolder(file, verifyBundleFolder);
      io.out(`${JSON.stringify(report, null, 2)}\n`);
      return report.ok ? 0 : 1;
    }
    const q = {
      asOf: instantFlag('as-of', values['as-of'], parseKnowledgeInstant),
      validAt: instantFlag('valid-at', values['valid-at'], parseInstant),
      space: values.space,
    };
    const bundle = await loadBundle(file);
    let result: unknown;
    if (action === 'list') {
      result = bundleList(bundle, {
        ...q,
        kind: values.kind,
        category: values.category,
        limit: intFlag('limit', values.limit, 1),
        cursor: values.cursor,
      });
    } else if (action === 'get') result = bundleGet(bundle, id ?? '', q);
    else result = bundleWhy(bundle, id ?? '', { ...q, depth: intFlag('depth', values.depth, 0) });
    io.out(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      io.err(`bundle: ${error.message}\n${BUNDLE_USAGE}\n`);
      return 2;
    }
    if (error instanceof BundleQueryError || error instanceof BundleRowError) {
      io.err(`bundle: ${error.message}\n`);
      return 2;
    }
    io.err(`bundle: ${(error as Error).message}\n`);
    return 1;
  }
}
