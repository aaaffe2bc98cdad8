import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'data/**', 'dist/**', '.scratch*/**'],
    // Kuzu and LanceDB are native engines: separate processes keep one test file's database from another's.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
