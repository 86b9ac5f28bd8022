/**
 * Starting the nemesis's and the soak's clusters. Free ports are found by binding port 0 and
 * closing it again (test/integration/support/cluster.ts `freePorts`), so on a machine shared by
 * other test runs another process can take a port before the node binds it: the node then exits
 * with `listen_failed` (code 20) before it is ready. That is the harness's race, not a finding,
 * so the start is retried on fresh ports a few times; anything else fails at once.
 */
import { TestCluster, type TestClusterOptions } from '../../integration/support/cluster.js';

const START_ATTEMPTS = 3;

export async function startCluster(options: TestClusterOptions): Promise<TestCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestCluster.start(options);
    } catch (error) {
      const raced = error instanceof Error && /listen_failed|code 20\b|EADDRINUSE/.test(error.message);
      if (!raced || attempt >= START_ATTEMPTS) throw error;
    }
  }
}
