import { runFromProcess } from './main.js';

/** Entry point when run from source (`node --conditions=source --import tsx apps/cli/src/bin.ts`). */
await runFromProcess();
