import { describe, expect, it } from 'vitest';
import { makeConfig, quorums } from '../src/index.js';

describe('quorums (§4.9 table)', () => {
  const table: [number, number, number, number, number][] = [
    // n, replication, view change, nack, f
    [1, 1, 1, 1, 0],
    [2, 2, 2, 1, 0],
    [3, 2, 2, 2, 1],
    [4, 2, 3, 3, 1],
    [5, 3, 3, 3, 2],
    [6, 3, 4, 4, 2],
    [7, 3, 5, 5, 3],
    [8, 3, 6, 6, 3],
  ];
  for (const [n, replication, viewChange, nack, f] of table) {
    it(`n = ${n}`, () => {
      expect(quorums(n)).toEqual({ replication, viewChange, nack, svcFromOthers: f });
    });
  }
  it('n >= 6: replication 3, view change n - 2', () => {
    for (let n = 6; n <= 32; n++) {
      const q = quorums(n);
      expect(q.replication).toBe(3);
      expect(q.viewChange).toBe(n - 2);
      expect(q.replication + q.viewChange).toBeGreaterThan(n);
    }
  });
  it('rosters above 32 are refused at construction', () => {
    expect(() => quorums(33)).toThrow();
    expect(() => makeConfig({ cluster: 1n, replica: 0, replicaCount: 33 })).toThrow(/exceeds 32/);
  });
});
