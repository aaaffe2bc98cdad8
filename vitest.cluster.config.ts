// `npm run test:cluster`: the cluster test, outside `npm test` (it starts etcd, HAProxy and three servers
// as processes, and needs Debian's etcd-server and haproxy installed).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/cluster/**/*.cluster.ts'],
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default', './test/summary-reporter.ts'],
    testTimeout: 120_000,
    hookTimeout: 240_000,
  },
});
