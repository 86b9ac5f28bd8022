import { describe, expect, it } from 'vitest';
import { SimNamespace, parentOf } from '../src/sim-namespace.js';

describe('SimNamespace', () => {
  it('keeps each directory\'s children in the path map\'s relative order through sets, deletes and copies', () => {
    const ns = new SimNamespace<number>();
    ns.set('/', 0);
    for (const [i, p] of ['/a', '/a/x', '/b', '/a/y', '/a/z', '/a/x/deep'].entries()) ns.set(p, i + 1);
    ns.delete('/a/x');
    ns.set('/a/x', 9); // re-created: it moves to the end, as a Map key does
    ns.set('/a/y', 10); // overwritten: it keeps its place
    const inMapOrder = (dir: string): string[] => [...ns.keys()].filter((k) => k !== '/' && parentOf(k) === dir);
    for (const dir of ['/', '/a', '/a/x', '/b']) expect(ns.childrenOf(dir)).toEqual(inMapOrder(dir));
    expect(ns.childrenOf('/a')).toEqual(['/a/y', '/a/z', '/a/x']);
    expect(ns.hasChildren('/b')).toBe(false);
    const copy = new SimNamespace(ns);
    ns.delete('/a/z');
    expect(copy.childrenOf('/a')).toEqual(['/a/y', '/a/z', '/a/x']);
    expect(ns.childrenOf('/a')).toEqual(['/a/y', '/a/x']);
    expect([...copy]).toEqual([...copy.keys()].map((k) => [k, copy.get(k)]));
    ns.delete('/never');
    expect(ns.size).toBe(6);
  });

  it('names the parent of normalized absolute paths', () => {
    expect(parentOf('/a')).toBe('/');
    expect(parentOf('/a/b/c')).toBe('/a/b');
    expect(parentOf('/')).toBe('/');
  });
});
