import { readlinkSync } from 'node:fs';

/**
 * The kernel thread id (Linux `gettid`) of the calling thread, or null where there is none to
 * read. Node has no API for it; `/proc/thread-self` is a link to `<pid>/task/<tid>` resolved by
 * the kernel for the thread that reads it, and a synchronous fs call runs on the calling thread
 * (not the libuv pool), so each worker learns its own id. It is published in
 * `runtime/threads.json` (supervisor.ts) so tools outside the process (the load bench) can
 * account CPU per thread from `/proc/<pid>/task/<tid>/stat`.
 */
export function currentThreadId(): number | null {
  try {
    const link = readlinkSync('/proc/thread-self');
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isSafeInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}
