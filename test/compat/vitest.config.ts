import { defineConfig } from 'vitest/config';

/**
 * `npm run compat`'s decoder target only (never `npm test`: it reads the official SDK from
 * ../shared/compat through SHOAL_COMPAT_SDK, the SDK copy with its dependencies installed).
 */
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['test/compat/**/*.compat.ts'],
    pool: 'forks',
    testTimeout: 60_000,
  },
});
