// `memory-ledger placement-agent`: arguments and environment, then the agent until SIGTERM or SIGINT.
import { parseArgs } from 'node:util';
import { PlacementAgent } from './agent.ts';

export async function runAgentCli(args: string[]): Promise<number> {
  let values: { etcd?: string; socket?: string; maps?: string; once?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: { etcd: { type: 'string' }, socket: { type: 'string' }, maps: { type: 'string' }, once: { type: 'boolean' } },
      strict: true,
    }));
  } catch (error) {
    console.error(`placement-agent: ${(error as Error).message}`);
    return 2;
  }
  const etcd = (values.etcd ?? process.env.SVC_ETCD ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  const socket = values.socket ?? process.env.LEDGER_ADMIN_SOCKET;
  const maps = values.maps ?? process.env.LEDGER_MAPS;
  const missing = [
    etcd.length === 0 && '--etcd (or SVC_ETCD)',
    !socket && '--socket (or LEDGER_ADMIN_SOCKET)',
    !maps && '--maps (or LEDGER_MAPS)',
  ].filter(Boolean);
  if (missing.length > 0 || !socket || !maps) {
    console.error(`placement-agent: set ${missing.join(', ')}`);
    return 2;
  }
  const agent = new PlacementAgent({ etcd, socket, maps, log: (line) => console.log(line) });
  if (values.once) {
    try {
      await agent.sync();
      return 0;
    } catch (error) {
      console.error(`placement-agent: ${(error as Error).message}`);
      return 1;
    } finally {
      await agent.close();
    }
  }
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await agent.run();
  await stopped;
  await agent.close();
  return 0;
}
