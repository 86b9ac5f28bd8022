#!/usr/bin/env node
// `shoal-server`: sizes the libuv thread pool for the configured shard count BEFORE anything can
// use the pool (this launcher is CommonJS on purpose: an ES-module entry is itself loaded through
// the pool, which then already exists with its default size), then runs the compiled server
// (apps/server/dist, built by `npm install` / `npm run build`). See docs/runtime.md.
'use strict';
const argv = process.argv.slice(2);
if (process.env.UV_THREADPOOL_SIZE === undefined) {
  try {
    const { poolSize } = require('../dist/pool-size.js');
    process.env.UV_THREADPOOL_SIZE = String(poolSize(argv, process.env));
  } catch {
    // Node < 20.19 cannot require() an ES module: keep libuv's default (4).
  }
}
import('../dist/main.js').then(
  ({ main }) => main(argv, process.env),
  (error) => {
    process.stderr.write(`shoal-server: cannot load the compiled server (run \`npm run build\`): ${error.message}\n`);
    process.exit(1);
  },
);
