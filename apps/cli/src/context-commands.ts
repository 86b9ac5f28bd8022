import type { Command } from 'commander';
import { ShoalInvalidArgumentError, formatAddress, parseAddress, parseConnectionString } from '@shoal/client';
import {
  type ContextConfig, type ContextEntry, activeContextName, createContext, deleteContext, getContext, listContexts, useContext,
} from './contexts.js';
import type { LocalLeaf } from './action.js';
import { requestTimeoutMs } from './target.js';

/**
 * `shoal context create|use|list|show|delete` (alias `ctx`): named connection profiles, the
 * reference CLI's contexts (contexts.ts). Secrets are never printed: `show` and `list` say
 * whether a password or a token is stored, not what it is.
 */
const str = (value: unknown): string => String(value);

function describe(entry: { readonly name: string; readonly active: boolean; readonly config: ContextConfig }): Record<string, unknown> {
  const c = entry.config;
  const auth = c.token !== undefined ? 'token' : c.username !== undefined ? (c.password !== undefined ? 'password' : 'password (asked)') : 'none';
  return {
    name: entry.name,
    active: entry.active,
    address: c.url !== undefined ? formatAddress(parseConnectionString(c.url).address) : c.tcpServerAddress ?? '127.0.0.1:8090 (default)',
    username: c.username ?? null,
    auth,
    ...(c.timeout === undefined ? {} : { timeout: c.timeout }),
    tls: c.tcpTlsEnabled === true || (c.url !== undefined && parseConnectionString(c.url).options.tls === true),
  };
}

/** Checks what a context would hold before it is written (bad values fail at create, not later). */
function checked(options: ContextConfig): ContextConfig {
  if (options.url !== undefined) parseConnectionString(options.url);
  if (options.tcpServerAddress !== undefined) parseAddress(options.tcpServerAddress);
  if (options.timeout !== undefined) requestTimeoutMs(options.timeout);
  if (options.token !== undefined && options.username !== undefined) throw new ShoalInvalidArgumentError('a context takes --token or --username, not both');
  if (options.password !== undefined && options.username === undefined) throw new ShoalInvalidArgumentError('--password needs --username');
  if ((options.tcpTlsDomain !== undefined || options.tcpTlsCaFile !== undefined) && options.tcpTlsEnabled !== true) {
    throw new ShoalInvalidArgumentError('--tcp-tls-domain and --tcp-tls-ca-file need --tcp-tls-enabled');
  }
  return options;
}

export function registerContexts(program: Command, leaf: LocalLeaf): void {
  const context = program.command('context').alias('ctx').description('named connection contexts (stored in $SHOAL_HOME/contexts.toml, mode 0600)');

  leaf(context.command('list').alias('l').description('list contexts; * marks the active one'), async (ctx) => {
    const entries = listContexts(ctx.io.env);
    if (ctx.out.structured) {
      ctx.out.table(entries.map(describe));
      return;
    }
    ctx.out.table(entries.map((e: ContextEntry) => {
      const row = describe(e);
      return { '': e.active ? '*' : '', name: row['name'], address: row['address'], username: row['username'] ?? '-', auth: row['auth'] };
    }));
  });

  leaf(context.command('use').alias('u').description('make a context the active one').argument('<name>'), async (ctx, name) => {
    useContext(ctx.io.env, str(name));
    ctx.out.message(`active context: ${str(name)}`, { active: str(name) });
  });

  leaf(context.command('show').alias('s').description('one context (default: the active one); secrets are not shown').argument('[name]'), async (ctx, name) => {
    const chosen = name === undefined ? activeContextName(ctx.io.env) : str(name);
    ctx.out.record(describe({ name: chosen, active: chosen === activeContextName(ctx.io.env), config: getContext(ctx.io.env, chosen) }));
  });

  leaf(context.command('create').alias('c')
    .description('create a context from --url, --tcp-server-address, --username [--password], --token, --timeout, --tcp-tls-* (it is not made active: `shoal context use NAME`)')
    .argument('<name>'), async (ctx, name) => {
    const o = ctx.options;
    const config = checked({
      ...(o.url === undefined ? {} : { url: o.url }),
      ...(o.tcpServerAddress === undefined ? {} : { tcpServerAddress: o.tcpServerAddress }),
      ...(o.username === undefined ? {} : { username: o.username }),
      ...(o.password === undefined ? {} : { password: o.password }),
      ...(o.token === undefined ? {} : { token: o.token }),
      ...(o.timeout === undefined ? {} : { timeout: o.timeout }),
      ...(o.tcpTlsEnabled === true ? { tcpTlsEnabled: true } : {}),
      ...(o.tcpTlsDomain === undefined ? {} : { tcpTlsDomain: o.tcpTlsDomain }),
      ...(o.tcpTlsCaFile === undefined ? {} : { tcpTlsCaFile: o.tcpTlsCaFile }),
    });
    const path = createContext(ctx.io.env, str(name), config);
    ctx.out.message(`context '${str(name)}' created in ${path}`, { created: str(name), path });
  });

  leaf(context.command('delete').alias('d').description('delete a context (the active one falls back to default)').argument('<name>'), async (ctx, name) => {
    const wasActive = deleteContext(ctx.io.env, str(name));
    ctx.out.message(`context '${str(name)}' deleted${wasActive ? '; active context: default' : ''}`, { deleted: str(name), active: activeContextName(ctx.io.env) });
  });
}
