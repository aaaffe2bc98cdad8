// The sections `npm run bench` runs, in order. Each capability adds its own file and one line here.
import type { BenchSection } from './section.ts';
import { agentBench } from './agent.ts';
import { appBench } from './app.ts';
import { scaleBench } from './scale.ts';
import { clusterBench } from './cluster.ts';
import { core } from './core.ts';
import { exportBench } from './export.ts';
import { extract } from './extract.ts';
import { facts } from './facts.ts';
import { importBench } from './import.ts';
import { loadBench } from './load.ts';
import { mcp } from './mcp.ts';
import { searchBench } from './search.ts';
import { spaceSearchBench } from './space-search.ts';
import { tenantCopyBench } from './tenant-copy.ts';

export const sections: BenchSection[] = [
  core,
  scaleBench,
  agentBench,
  facts,
  mcp,
  extract,
  searchBench,
  spaceSearchBench,
  exportBench,
  appBench,
  importBench,
  clusterBench,
  tenantCopyBench,
  loadBench,
];
