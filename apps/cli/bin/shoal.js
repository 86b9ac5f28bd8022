#!/usr/bin/env node
// The `shoal` command: runs the compiled CLI (apps/cli/dist, produced by `npm run build`).
import { runFromProcess } from '../dist/main.js';

await runFromProcess();
