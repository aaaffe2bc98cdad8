// GET /v1/check_install: each part of the installation says whether it works, and why not.
import { accessSync, constants } from 'node:fs';
import type { Ledger } from '../storage/log/ledger.ts';
import type { Config } from './config.ts';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export type CheckProvider = () => Promise<Check> | Check;

export function coreChecks(config: Config, ledger: Ledger): CheckProvider[] {
  return [
    () => {
      try {
        accessSync(config.dataDir, constants.W_OK);
        return { name: 'data_folder', ok: true, detail: `${config.dataDir} is writable` };
      } catch (error) {
        return { name: 'data_folder', ok: false, detail: `${config.dataDir}: ${(error as Error).message}` };
      }
    },
    async () => {
      try {
        const counts = await ledger.storeCounts();
        const r = ledger.residentStats();
        return {
          name: 'graph_store',
          ok: true,
          detail: `kuzu: ${JSON.stringify(counts)}; read models of ${r.spaces} space(s) and ${r.tenants} whole tenant(s) in memory, ~${Math.round(r.bytes / 1048576)} of ${Math.round(r.budget / 1048576)} MB (SVC_MEMORY_MB), ${r.evictions} evicted so far, ${r.reloads} loaded again within a minute of their eviction${r.reloads > 0 ? ' (raise SVC_MEMORY_MB)' : ''}`,
        };
      } catch (error) {
        return { name: 'graph_store', ok: false, detail: (error as Error).message };
      }
    },
    () => ({
      name: 'auth_mode',
      ok: true,
      detail: config.apiKeys
        ? `hosted: ${config.apiKeys.size} key(s), Authorization: Bearer required`
        : `open: single tenant "${config.tenant}"`,
    }),
  ];
}

export async function runChecks(providers: readonly CheckProvider[]): Promise<{ ok: boolean; checks: Check[] }> {
  const checks: Check[] = [];
  for (const p of providers) {
    try {
      checks.push(await p());
    } catch (error) {
      checks.push({ name: 'check', ok: false, detail: (error as Error).message });
    }
  }
  return { ok: checks.every((c) => c.ok), checks };
}
