// `memory-ledger move TENANT --to SERVER` and `memory-ledger move --abort TENANT`: arguments and
// environment (SVC_ETCD, SVC_OPERATOR_KEY), then the move of move.ts with each step printed. SIGINT or
// SIGTERM abandons the move cleanly (the tenant stays on its source, writable); a second one exits at once.
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { abortMove, DEFAULT_PAGE_ROWS, MoveError, moveTenant } from './move.ts';

const positive = (name: string, text: string | undefined, fallback: number): number => {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new MoveError(`--${name}: expected a whole number, got "${text}"`);
  return n;
};

export async function runMoveCli(args: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        to: { type: 'string' },
        abort: { type: 'boolean' },
        etcd: { type: 'string' },
        'page-rows': { type: 'string' },
        'tail-rows': { type: 'string' },
        'keep-source': { type: 'boolean' },
        'hold-frozen-ms': { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(`move: ${(error as Error).message}`);
    return 2;
  }
  const tenant = positionals[0];
  const etcdHosts = (typeof values.etcd === 'string' ? values.etcd : (process.env.SVC_ETCD ?? ''))
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  const operatorKey = process.env.SVC_OPERATOR_KEY?.trim();
  const to = typeof values.to === 'string' ? values.to : undefined;
  const problems = [
    (tenant === undefined || positionals.length > 1) && 'name one TENANT',
    !values.abort && !to && 'give --to SERVER (or --abort)',
    etcdHosts.length === 0 && 'set SVC_ETCD (or --etcd URLS)',
    !operatorKey && 'set SVC_OPERATOR_KEY (the servers’ operator key)',
  ].filter(Boolean);
  if (problems.length > 0 || tenant === undefined || !operatorKey) {
    console.error(`move: ${problems.join('; ')}`);
    return 2;
  }
  const etcd = new Etcd3({
    hosts: etcdHosts,
    dialTimeout: 3_000,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + 5_000 }),
  });
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (name: string): void => {
    if (++signals > 1) process.exit(130);
    console.error(`move: ${name}: abandoning the move (again to exit at once)`);
    stop.abort(new MoveError(`interrupted by ${name}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const log = (line: string): void => console.log(`${new Date().toISOString()} ${line}`);
  try {
    if (values.abort) await abortMove({ etcd, operatorKey, tenant, log });
    else
      await moveTenant({
        etcd,
        operatorKey,
        tenant,
        to: to ?? '',
        pageRows: positive('page-rows', values['page-rows'] as string | undefined, DEFAULT_PAGE_ROWS) || DEFAULT_PAGE_ROWS,
        tailRows: positive('tail-rows', values['tail-rows'] as string | undefined, 1_000),
        holdFrozenMs: positive('hold-frozen-ms', values['hold-frozen-ms'] as string | undefined, 0),
        keepSource: values['keep-source'] === true,
        signal: stop.signal,
        log,
      });
    return 0;
  } catch (error) {
    console.error(`move: ${error instanceof MoveError ? error.message : String((error as Error).stack ?? error)}`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    etcd.close();
  }
}
