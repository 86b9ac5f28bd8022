/**
 * The simulator suite, 3-replica clusters (with a few 1- and 2-replica ones): every seed runs
 * the production drivers under its own mix of faults (options.ts: classic, overlap, long, wide)
 * and must pass every checker. A failing seed replays with `npm run vopr -- --seed S --replicas N`.
 */
import { describe, expect, it } from 'vitest';
import { failures, seedRange } from './seeds.js';

describe('simulator seeds', () => {
  // Ten seeds per test: a slow (shared) machine stays inside each test's budget, and a failure names its range.
  for (let first = 1; first <= 60; first += 10) {
    it(`seeds ${first}..${first + 9} of 3 replicas pass`, () => {
      expect(failures(3, seedRange(first, first + 9))).toEqual([]);
    }, 170_000);
  }

  // Once liveness failures (issue 12): 100032 and 72 stuck beyond the loss budget (check
  // .liveness_beyond_budget), 100472 and 100780 downed for good the replica holding the only other
  // copy of ops the survivor had lost (the degraded phase now downs that survivor first).
  it('seeds 72, 100032, 100472, 100780 of 3 replicas pass', () => {
    expect(failures(3, [72, 100032, 100472, 100780])).toEqual([]);
  }, 170_000);

  // Once a liveness failure: replica 2 down for good, the metadata merge waited forever at op 15
  // (the canonical sender's log ends below it; the only header is the older log view's:
  // merge.ts olderViewCandidate, deviation 25).
  it('seed 200194 of 3 replicas passes', () => {
    expect(failures(3, [200194])).toEqual([]);
  }, 170_000);

  // Once a safety failure: a read of replica 1's purge.gen flipped a bit of the created revision
  // (1 read as 0x2000000001, its faulty disk's only fault), the partition driver took its directory
  // for a deleted incarnation's and re-created it, and the group booted brand new and voted with
  // an empty log: a view without the other holder of committed op 6 committed another op 6
  // (partition-driver.ts: a newer created revision is refused, never re-created).
  it('seed 300962 of 3 replicas passes', () => {
    expect(failures(3, [300962])).toEqual([]);
  }, 170_000);

  // Once a checker false positive: replica 0 destroyed deleted partition 0 (its files removed),
  // crashed, and booted with metadata from before the deletion, so it opened the partition again,
  // brand new, below the view its earlier life had made durable; the deletion had voided that
  // promise (checker.ts partitionDestroyed).
  it('seed 1001430 of 3 replicas passes', () => {
    expect(failures(3, [1001430])).toEqual([]);
  }, 170_000);

  // Once a safety failure: the primary lost its journal to a power loss, the primary-elect lagged
  // one op behind the commit it knew, and the merge of those two DVCs dropped committed op 193
  // (merge.ts: a lost tail does not count towards the quorum intersection). The boot latch changed
  // the seed's run since; merge.test.ts keeps the exact DVCs.
  it('seed 1004652 of 3 replicas passes', () => {
    expect(failures(3, [1004652])).toEqual([]);
  }, 170_000);

  // Once a safety failure: after a process kill, a read of replica 1's partition journal flipped
  // the magic of the record after its OPEN record (the first append's RESERVE); the boot took the
  // OPEN record's reservation (0) as the bound of what was acked, reported nothing lost, and the
  // replica voted with an empty log: view 2, without the other holder, committed another op 1
  // (partition-journal.ts `unbounded`: such damage makes the journal lost).
  it('seed 500232 of 3 replicas passes', () => {
    expect(failures(3, [500232])).toEqual([]);
  }, 170_000);

  // Once a crash: at a replica's boot the tail probe of the active segment read batch 0 clean and
  // the walk's second read of it came back with a bit flipped (read fault); recovery cut the log
  // under the probed index entry and kept the entry, and the next append of offset 0 failed the
  // index's monotonicity assertion (segment-recovery.ts: one walk per candidate).
  it('seed 1002238 of 3 replicas passes', () => {
    expect(failures(3, [1002238])).toEqual([]);
  }, 170_000);

  // Once liveness failures, metadata with one replica down for good: the degraded phase kept as a
  // survivor a replica that was down at its pick (restarted by it) and had lost an op it may have
  // acked (faulty); the op's only other copy went down for good (faults.ts `missedAcks`).
  it('seeds 1003392, 1004750, 1011886, 1012422 of 3 replicas pass', () => {
    expect(failures(3, [1003392, 1004750, 1011886, 1012422])).toEqual([]);
  }, 170_000);

  // Once a liveness failure: a backup adopted a StartView at commit 8 holding ops 7 and 8 of a
  // truncated view; the reconcile left them (it scanned above the commit point only), a restart
  // restored them as ops of the new log view, and every merge waited on the conflict at op 7
  // (start-view.ts reconcile; stale-entries.test.ts).
  it('seed 1008032 of 3 replicas passes', () => {
    expect(failures(3, [1008032])).toEqual([]);
  }, 170_000);

  // Once liveness failures, a partition with one replica down for good: a backup's hole below its
  // journal head was never filled, its state machine refused the primary's retransmissions as a
  // base-offset mismatch (prepare.ts: a fill is journaled as a repair; stale-entries.test.ts).
  it('seeds 1004762, 1011766, 200660 of 3 replicas pass', () => {
    expect(failures(3, [1004762, 1011766, 200660])).toEqual([]);
  }, 170_000);

  // Once a safety failure: the merge took an older log view's ops 9..34 on top of a committed
  // op 8 they did not chain to, and the replica holding them applied its own older ops 7 and 8
  // (merge.ts: the canonical log view's primary bounds the log; an older header right above the
  // commit point must chain to it; merge.test.ts keeps the DVCs).
  it('seeds 1017918 and 1000216 of 3 replicas pass', () => {
    expect(failures(3, [1017918, 1000216])).toEqual([]);
  }, 170_000);

  // Once liveness failures: a state transfer installed ahead forgot its log view's canonical
  // headers, so an older log view's copy of op 53 could no longer be shown to be the current
  // log's, and every merge deadlocked on it (1006750; state-transfer.ts); the chain walk took an
  // unknown parent (0) for a checksum and found the committed ops below it bogus, re-fetching
  // them forever (1009712; trust.ts verify, stale-entries.test.ts).
  // ...and a stale op 30 took the acknowledged ops above it with it on the survivor of a degraded
  // phase (1003514; trust.ts discardBogus keeps the entries above a bogus one).
  it('seeds 1006750, 1009712 and 1003514 of 3 replicas pass', () => {
    expect(failures(3, [1006750, 1009712, 1003514])).toEqual([]);
  }, 170_000);

  // Once a liveness failure: a misdirected write left a hole in replica 1's segment; replica 2's
  // transfers from it failed to verify six times, and the budget, keyed on the snapshot op alone,
  // then refused the same snapshot op from replica 0 for good (now keyed on the source too).
  it('seed 1023442 of 3 replicas passes', () => {
    expect(failures(3, [1023442])).toEqual([]);
  }, 170_000);

  // Once a liveness failure: a metadata WAL hole (op 75, never journaled: live prepares 76..78
  // came first) became a faulty slot at a process restart, so the survivor could not nack it and
  // the degraded phase's merge waited forever for a copy of that never-committed op
  // (metadata-driver.ts: holes of a clean scan are not faulty).
  it('seed 1023994 of 3 replicas passes', () => {
    expect(failures(3, [1023994])).toEqual([]);
  }, 170_000);

  // Once a liveness failure, replica 2 down for good: a process kill's boot cut the metadata WAL
  // at a chain break (canonical ops 10..30 repaired above stale op 9) and recorded the cut ops
  // faulty; their only other copy was on the dead replica (metadata-recovery.ts keeps them).
  it('seed 1068468 of 3 replicas passes', () => {
    expect(failures(3, [1068468])).toEqual([]);
  }, 170_000);

  it('8 seeds of 1 replica and 8 of 2 replicas pass', () => {
    expect([...failures(1, seedRange(1, 8)), ...failures(2, seedRange(1, 8))]).toEqual([]);
  }, 120_000);
  // Once a liveness failure, replica 2 down for good: a partition group's merge stayed deadlocked
  // on the header chain (merge.ts: an op with parent 0 right above the commit point, prepared by a
  // primary that started there without that header, leaves the commit point's header out).
  it('seed 1038296 of 3 replicas passes', () => {
    expect(failures(3, [1038296])).toEqual([]);
  }, 170_000);
  // Once a liveness failure, replica 0 down for good: partition group 1's merge waited at the
  // commit point for a copy (merge.ts: the header a DVC's head chains down to there, when that
  // head's commit field reaches it, is the committed op).
  it('seed 1075070 of 3 replicas passes', () => {
    expect(failures(3, [1075070])).toEqual([]);
  }, 170_000);
  // Once a SAFETY failure (committed op 762 with two checksums), found once the simulator ran the
  // server's partition core settings with a pipeline of 4: the primary lost its journal to a power
  // loss beyond one suffix window above its commit point, reported a known log end below op 762,
  // and as the canonical log view's primary it bounded the merge, which cut 762 (dvc-suffix.ts:
  // such a lost tail reports its log end as unknown).
  it('seed 1026552 of 3 replicas passes', () => {
    expect(failures(3, [1026552])).toEqual([]);
  }, 170_000);
  // Once a liveness failure, replica 0 down for good (found once a backup followed a restarted
  // primary at once, deviation 32): the restarted primary of partition group 0 knew only its
  // durable commit point 330, offered that state to a backup that had heard of commit 334 and
  // needed its ack to commit 331-334 again; the backup refused the offer as behind, its repair
  // met evicted ops, for ever (state-transfer.ts: an offer below our commit_max is taken when it
  // moves us forward).
  it('seed 1044292 of 3 replicas passes', () => {
    expect(failures(3, [1044292])).toEqual([]);
  }, 170_000);
  // Once a liveness failure, replica 1 down for good: partition group 0's primary-elect held ops
  // 209..399 unverified and lacked 400..426, and every elect repair round asked for 209..336,
  // copies it already held (repair.ts startElectRepair: the holes first).
  it('seed 1038836 of 3 replicas passes', () => {
    expect(failures(3, [1038836])).toEqual([]);
  }, 170_000);
  // Once a crash (found by the first sweep with a drawn group-commit wait depth): on a faulty disk
  // a partition's state-transfer install reopened its storage, and the frontier write read a
  // superblock slot a misdirected write had damaged; SuperblockStore.write asserted. The reopened
  // superblock is now read first and a refusal stops the driver as boot would
  // (partition_recovery_refused; partition-driver.ts superblockRefusal).
  it('seed 1011870 of 3 replicas passes', () => {
    expect(failures(3, [1011870])).toEqual([]);
  }, 170_000);
  // Once an assertion crash (found by the sweep of c4f5e08; it fails on 02e3570 too): a misdirected
  // append put a metadata WAL record 4 KiB below its place, so the file ended inside a record the
  // index named, and a truncation's rewrite asserted on the short read. A short read is now damage
  // like a record that never verifies: copied (as zeros) at its size, judged by the next boot
  // (metadata-journal.ts #readVerified).
  it('seed 1125324 of 3 replicas passes', () => {
    expect(failures(3, [1125324])).toEqual([]);
  }, 170_000);
  // Once a liveness failure (found by the sweep of a91c2e0; it fails on d1293a1 too): replica 2
  // dead for good, the metadata merge took the older log view's ops 49 and 50 under the canonical
  // op 51 whose parent names another op 50, and deadlocked on the chain for good. The canonical
  // header above now names the op below it, and the older header there counts as a nack
  // (merge.ts impliedCanonical).
  it('seed 1135380 of 3 replicas passes', () => {
    expect(failures(3, [1135380])).toEqual([]);
  }, 170_000);
});
