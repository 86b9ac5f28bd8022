/**
 * The dashboard's static files, served by the node from its own package (no CDN, no network):
 * `ui/index.html`, `ui/app.css`, `ui/dist/app.js` and `view.js` (compiled from `ui/src/` by `tsc -b`)
 * and uPlot's browser build from the `uplot` dependency. Only these names are served (no path
 * from the request ever reaches the file system). Read once, then kept in memory.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The runtime package's root: this file is `src/node/` (tsx) or `dist/node/` (built). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);

interface Asset {
  readonly path: () => string;
  readonly type: string;
}

const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['index.html', { path: () => `${PACKAGE_ROOT}ui/index.html`, type: 'text/html; charset=utf-8' }],
  ['app.css', { path: () => `${PACKAGE_ROOT}ui/app.css`, type: 'text/css; charset=utf-8' }],
  ['app.js', { path: () => `${PACKAGE_ROOT}ui/dist/app.js`, type: 'text/javascript; charset=utf-8' }],
  ['view.js', { path: () => `${PACKAGE_ROOT}ui/dist/view.js`, type: 'text/javascript; charset=utf-8' }],
  ['uPlot.iife.min.js', { path: () => require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' }],
  ['uPlot.min.css', { path: () => require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' }],
]);

export interface LoadedAsset {
  readonly body: Buffer;
  readonly type: string;
}

export class UiAssets {
  readonly #cache = new Map<string, LoadedAsset>();

  /** The asset named `name` (the part of the URL after `/ui/`; empty: the page), or null. */
  get(name: string): LoadedAsset | null {
    const key = name === '' ? 'index.html' : name;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const asset = ASSETS.get(key);
    if (asset === undefined) return null;
    const loaded = { body: readFileSync(asset.path()), type: asset.type };
    this.#cache.set(key, loaded);
    return loaded;
  }
}
