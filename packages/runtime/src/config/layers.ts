/**
 * One configuration layer (built-in defaults, the file, the environment) as a flat map from a
 * concrete key path (`cluster.nodes[1].ports.tcp`) to its normalized value and origin. Layers
 * merge by key: later layers win. An array of tables given in the file replaces the array of
 * earlier layers; the environment patches or extends it by index (`IGGY_CLUSTER_NODES_3_IP`).
 */
import { KEYS, type KeySpec } from './schema.js';
import { fromToml, type Value } from './values.js';

export interface Entry {
  readonly value: Value;
  /** `default`, `file`, or the env var name. */
  readonly origin: string;
}

export interface Layer {
  readonly entries: Map<string, Entry>;
  /** Arrays of tables this layer defines wholesale (file only), by concrete path, with their length. */
  readonly arrays: Map<string, number>;
}

export function emptyLayer(): Layer {
  return { entries: new Map(), arrays: new Map() };
}

/** The built-in defaults, parsed from their TOML form in the schema. */
export function defaultLayer(): Layer {
  const layer = emptyLayer();
  for (const spec of KEYS) {
    if (spec.default === undefined) continue;
    layer.entries.set(spec.path, { value: parseDefault(spec), origin: 'default' });
  }
  return layer;
}

export function mergeLayers(layers: readonly Layer[]): Layer {
  const merged = emptyLayer();
  for (const layer of layers) {
    for (const [arrayPath, length] of layer.arrays) {
      for (const path of [...merged.entries.keys()]) {
        if (path.startsWith(`${arrayPath}[`)) merged.entries.delete(path);
      }
      for (const nested of [...merged.arrays.keys()]) {
        if (nested.startsWith(`${arrayPath}[`)) merged.arrays.delete(nested);
      }
      merged.arrays.set(arrayPath, length);
    }
    for (const [path, entry] of layer.entries) merged.entries.set(path, entry);
  }
  return merged;
}

/**
 * The item indexes of an array of tables in the merged layer: its declared length in the file,
 * extended by any higher index an env var named. Indexes with no key at all are gaps.
 */
export function arrayIndexes(layer: Layer, arrayPath: string): { readonly count: number; readonly gaps: readonly number[] } {
  const present = new Set<number>();
  const prefix = `${arrayPath}[`;
  for (const path of layer.entries.keys()) {
    if (!path.startsWith(prefix)) continue;
    const close = path.indexOf(']', prefix.length);
    present.add(Number(path.slice(prefix.length, close)));
  }
  const declared = layer.arrays.get(arrayPath) ?? 0;
  const count = Math.max(declared, ...[...present].map((index) => index + 1), 0);
  const gaps: number[] = [];
  for (let index = declared; index < count; index += 1) {
    if (!present.has(index)) gaps.push(index);
  }
  return { count, gaps };
}

function parseDefault(spec: KeySpec): Value {
  const converted = fromToml(spec, spec.default);
  if (!converted.ok) throw new Error(`config schema: bad default for ${spec.path}: ${converted.reason}`);
  return converted.value;
}
