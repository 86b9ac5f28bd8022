/**
 * The dashboard at `/ui`: polls this node's `/api/v1/cluster` once a second (the node fetches its
 * peers' `/api/v1/node`, so the browser talks to one origin), rebuilds the tables and appends a
 * point to the throughput chart (uPlot, loaded as a global by index.html from the node itself).
 * Rates are differences between two answers: messages appended on partition primaries, client
 * bytes received + sent on every node.
 *
 * The JSON wants a personal access token as its bearer. The page takes it from a `#token=…`
 * fragment (read once, then removed from the address bar) or from its form, shown while the
 * node answers 401, and keeps it in sessionStorage (this tab only). It polls on while refused:
 * a token just made is accepted by a node moments later, once that node applied its creation.
 */
/// <reference types="uplot" />
import type { ClusterJson } from './api.js';
import { formatCount, partitionRows, renderConsumerGroups, renderGroups, renderNodes, renderPartitions } from './view.js';

const POLL_MS = 1000;
/** Points kept on the chart (five minutes at one a second). */
const HISTORY = 300;
const TOKEN_KEY = 'shoal.dashboard.token';

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`dashboard: #${id} missing`);
  return found as T;
}

function tbody(id: string): HTMLTableSectionElement {
  const body = element<HTMLTableElement>(id).tBodies[0];
  if (body === undefined) throw new Error(`dashboard: #${id} has no tbody`);
  return body;
}

/** The bearer: sessionStorage when the browser allows it, else this page's memory. */
class TokenStore {
  #memory: string | null = null;

  get(): string | null {
    try {
      return sessionStorage.getItem(TOKEN_KEY) ?? this.#memory;
    } catch {
      return this.#memory;
    }
  }

  set(token: string | null): void {
    this.#memory = token;
    try {
      if (token === null) sessionStorage.removeItem(TOKEN_KEY);
      else sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
      // Storage refused (privacy settings): the token lives as long as the page.
    }
  }

  /** A `#token=…` fragment: stored, then taken out of the address bar (and so out of the history). */
  takeFromFragment(): void {
    // Split by hand, not URLSearchParams: that reads a pasted `+` as a space.
    const parts = location.hash.slice(1).split('&');
    const found = parts.find((p) => p.startsWith('token='));
    if (found === undefined) return;
    let token = found.slice('token='.length);
    try {
      token = decodeURIComponent(token);
    } catch {
      // Not percent-encoded: taken as written.
    }
    if (token.trim() !== '') this.set(token.trim());
    const rest = parts.filter((p) => !p.startsWith('token=')).join('&');
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest === '' ? '' : `#${rest}`}`);
  }
}

type AuthState = 'ok' | 'required' | 'refused';

interface Sample {
  readonly at: number;
  readonly appended: ReadonlyMap<string, number>;
  /** Client bytes (received + sent) per node name. */
  readonly bytes: ReadonlyMap<string, number>;
}

class Dashboard {
  readonly #times: number[] = [];
  readonly #messages: number[] = [];
  readonly #megabytes: number[] = [];
  #previous: Sample | null = null;
  #chart: uPlot | null = null;
  readonly #tokens = new TokenStore();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #polling = false;

  start(): void {
    this.#tokens.takeFromFragment();
    element<HTMLFormElement>('auth-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const input = element<HTMLInputElement>('token-input');
      const token = input.value.trim();
      if (token === '') return;
      this.#tokens.set(token);
      input.value = '';
      this.#pollNow();
    });
    element('forget-token').addEventListener('click', () => {
      this.#tokens.set(null);
      this.#pollNow();
    });
    void this.#poll();
  }

  #pollNow(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.#polling) void this.#poll();
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    const pill = element('connection');
    const token = this.#tokens.get();
    try {
      const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
      const response = await fetch('/api/v1/cluster', { cache: 'no-store', headers });
      if (response.status === 401) {
        this.#auth(token === null ? 'required' : 'refused');
        pill.textContent = token === null ? 'token required' : 'token refused';
        pill.className = 'pill bad';
      } else {
        if (!response.ok) throw new Error(`HTTP ${response.status}${response.status === 503 ? ' (the node cannot check tokens yet)' : ''}`);
        this.#render((await response.json()) as ClusterJson);
        this.#auth('ok');
        pill.textContent = 'live';
        pill.className = 'pill ok';
      }
    } catch (error) {
      pill.textContent = `node unreachable: ${error instanceof Error ? error.message : String(error)}`;
      pill.className = 'pill bad';
    }
    this.#polling = false;
    this.#timer = setTimeout(() => void this.#poll(), POLL_MS);
  }

  /** The token form while the node refuses the request; hidden (and the data shown) once it answers. */
  #auth(state: AuthState): void {
    const previous = document.body.dataset['auth'];
    document.body.dataset['auth'] = state;
    element('auth').hidden = state === 'ok';
    element('forget-token').hidden = state !== 'ok';
    if (state === previous) return;
    element('auth-message').textContent = state === 'required'
      ? 'This node wants a personal access token to show the cluster.'
      : state === 'refused'
        ? 'This node refused the token: unknown, expired or deleted (a new one is accepted moments after it is made). Enter another.'
        : '';
    if (state !== 'ok') element<HTMLInputElement>('token-input').focus();
  }

  #render(cluster: ClusterJson): void {
    const self = cluster.nodes.find((n) => n.self);
    element('cluster-name').textContent = cluster.cluster === null ? 'single node' : `cluster ${cluster.cluster}`;
    element('served-by').textContent = `served by ${self?.name ?? '?'}`;
    element('updated').textContent = `updated ${new Date(cluster.at).toLocaleTimeString()}`;
    renderNodes(tbody('nodes'), cluster);
    renderGroups(tbody('groups'), cluster);

    const partitions = partitionRows(cluster);
    const sample: Sample = {
      at: cluster.at,
      appended: new Map(partitions.map((p) => [`${p.stream}/${p.topic}/${p.partition.partition}/${p.partition.group}`, p.partition.appended])),
      bytes: new Map(cluster.nodes.flatMap((n) => (n.summary === null ? [] : [[n.name, n.summary.traffic.bytesReceived + n.summary.traffic.bytesSent] as const]))),
    };
    const previous = this.#previous;
    const seconds = previous === null ? 0 : (sample.at - previous.at) / 1000;
    const rateOf = (key: string, now: number, before: ReadonlyMap<string, number> | undefined): number | null => {
      const then = before?.get(key);
      return then === undefined || seconds <= 0 ? null : Math.max(0, now - then) / seconds;
    };
    renderPartitions(tbody('partitions'), partitions.map((p) => ({
      ...p, rate: rateOf(`${p.stream}/${p.topic}/${p.partition.partition}/${p.partition.group}`, p.partition.appended, previous?.appended),
    })), cluster);
    element('no-streams').hidden = partitions.length > 0;
    renderConsumerGroups(tbody('consumer-groups'), cluster);
    element('no-groups').hidden = tbody('consumer-groups').rows.length > 0;

    if (previous !== null && seconds > 0) {
      let messages = 0;
      for (const [key, now] of sample.appended) messages += rateOf(key, now, previous.appended) ?? 0;
      let bytes = 0;
      for (const [node, now] of sample.bytes) bytes += rateOf(node, now, previous.bytes) ?? 0;
      this.#point(sample.at / 1000, messages, bytes / 1e6);
    }
    this.#previous = sample;
  }

  #point(at: number, messages: number, megabytes: number): void {
    this.#times.push(at);
    this.#messages.push(messages);
    this.#megabytes.push(megabytes);
    if (this.#times.length > HISTORY) {
      this.#times.shift();
      this.#messages.shift();
      this.#megabytes.shift();
    }
    const data: uPlot.AlignedData = [this.#times, this.#messages, this.#megabytes];
    if (this.#chart === null) {
      const container = element('chart');
      this.#chart = new uPlot({
        width: Math.max(320, container.clientWidth), height: 220,
        series: [
          {},
          { label: 'messages/s', stroke: '#1f6feb', width: 2, value: (_u, v) => (v === null ? '—' : formatCount(Math.round(v))) },
          { label: 'client MB/s', stroke: '#d97706', width: 2, scale: 'mb', value: (_u, v) => (v === null ? '—' : v.toFixed(2)) },
        ],
        axes: [
          {},
          { label: 'messages/s', values: (_u, ticks) => ticks.map((t) => formatCount(t)) },
          { label: 'MB/s', scale: 'mb', side: 1, grid: { show: false }, values: (_u, ticks) => ticks.map((t) => t.toFixed(1)) },
        ],
        scales: { mb: { auto: true } },
      }, data, container);
      window.addEventListener('resize', () => this.#chart?.setSize({ width: Math.max(320, container.clientWidth), height: 220 }));
    } else {
      this.#chart.setData(data);
    }
    element('chart').dataset['points'] = String(this.#times.length);
    element('chart').dataset['lastMessagesPerSecond'] = String(Math.round(messages));
  }
}

new Dashboard().start();
