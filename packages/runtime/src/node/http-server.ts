/**
 * The node's HTTP port (`http.address`): metrics, probes, the dashboard and its JSON. Read-only.
 * The metrics endpoint and the dashboard's JSON (`/api/v1/*`) want `Authorization: Bearer
 * <personal access token>`, as the reference's HTTP API does for everything but its probes and
 * login (http-auth.ts); the probes and the dashboard's static page answer without credentials (a
 * load balancer has no token; the page asks for one).
 *
 * | path                     | answer                                                            |
 * |--------------------------|-------------------------------------------------------------------|
 * | `http.metrics.endpoint`  | Prometheus text (default `/metrics`; `?gc=1` collects garbage first); bearer PAT, else 401 |
 * | `/ping`, `/live`         | 200 `pong` while the process runs                                 |
 * | `/ready`                 | 200 when this node can serve, else 503; JSON with the failed checks |
 * | `/api/v1/node`           | this node's summary (node/node-api.ts); bearer PAT, else 401      |
 * | `/api/v1/cluster`        | every roster node's summary, fetched by this node with the caller's bearer; bearer PAT, else 401 |
 * | `/api/v1/…` (other)      | 404 with a valid bearer, else 401 (no path is revealed without one) |
 * | `/ui`, `/ui/…`           | the dashboard's static files (node/ui-assets.ts), open            |
 *
 * GET and HEAD only (405 otherwise). A handler that throws answers 500 and logs; it never takes
 * the node down.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Logger } from '../log/logger.js';
import { EXPOSITION_CONTENT_TYPE } from '../metrics/exposition.js';
import type { BearerVerdict } from './control.js';
import { bearerToken } from './http-auth.js';
import type { ClusterSummary, NodeSummary } from './node-api.js';
import type { Readiness } from './readiness.js';
import { UiAssets } from './ui-assets.js';

/** What the HTTP port asks the supervisor. */
export interface HttpHost {
  metrics(gc: boolean): Promise<string>;
  readiness(): Readiness;
  /** Is this personal access token valid now? */
  verifyBearer(token: string): Promise<BearerVerdict>;
  node(): Promise<NodeSummary>;
  /** Every roster node's summary; `bearer` (the caller's, already verified here) goes to the peers. */
  cluster(bearer: string): Promise<ClusterSummary>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const AUTH_REALM = 'shoal';
/** Every path under this prefix wants the bearer, known or not. */
const API_PREFIX = '/api/v1/';

export class NodeHttpServer {
  readonly #host: HttpHost;
  readonly #log: Logger;
  /** Null: `http.metrics.enabled` is off (the path answers 404). */
  readonly #metricsPath: string | null;
  readonly #assets = new UiAssets();
  readonly #server: Server;

  constructor(host: HttpHost, metricsPath: string | null, log: Logger) {
    this.#host = host;
    this.#log = log;
    this.#metricsPath = metricsPath;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        this.#log.warn('http request failed', { url: req.url ?? '', error });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal error\n');
      });
    });
  }

  get server(): Server {
    return this.#server;
  }

  listen(host: string, port: number): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        const address = this.#server.address();
        if (address === null || typeof address === 'string') reject(new Error('http: no bound address'));
        else resolve({ host: address.address, port: address.port });
      });
    });
  }

  close(): void {
    this.#server.close();
    this.#server.closeAllConnections?.();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (path === this.#metricsPath) {
      if ((await this.#authorized(req, res)) === null) return;
      const body = await this.#host.metrics(url.searchParams.get('gc') === '1');
      res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE }).end(body);
      return;
    }
    if (path.startsWith(API_PREFIX)) return this.#api(path, req, res);
    switch (path) {
      case '/ping':
      case '/live':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('pong\n');
        return;
      case '/ready': {
        const readiness = this.#host.readiness();
        sendJson(res, readiness.ready ? 200 : 503, readiness);
        return;
      }
      case '/ui':
        res.writeHead(301, { location: '/ui/' }).end();
        return;
      default:
        if (path.startsWith('/ui/')) return this.#asset(path.slice('/ui/'.length), res);
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  }

  /** The dashboard's JSON: the bearer first, then the path. */
  async #api(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const bearer = await this.#authorized(req, res);
    if (bearer === null) return;
    switch (path) {
      case '/api/v1/node':
        sendJson(res, 200, await this.#host.node());
        return;
      case '/api/v1/cluster':
        sendJson(res, 200, await this.#host.cluster(bearer));
        return;
      default:
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  }

  /** The bearer check of a protected path: the verified token, or null when it answered 401 / 503 itself. */
  async #authorized(req: IncomingMessage, res: ServerResponse): Promise<string | null> {
    const token = bearerToken(req.headers.authorization);
    const verdict = token === null ? 'denied' : await this.#host.verifyBearer(token);
    if (verdict === 'ok' && token !== null) return token;
    if (verdict === 'unavailable') {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' }).end('cannot check credentials yet\n');
    } else {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': `Bearer realm="${AUTH_REALM}"` })
        .end('a personal access token is required: Authorization: Bearer <token>\n');
    }
    return null;
  }

  #asset(name: string, res: ServerResponse): void {
    const asset = this.#assets.get(name);
    if (asset === null) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': asset.type, 'cache-control': 'no-cache' }).end(asset.body);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
