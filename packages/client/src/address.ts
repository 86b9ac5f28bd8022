import { ErrorCode } from '@shoal/protocol';
import { ShoalInvalidArgumentError } from './errors.js';

/** A node's client endpoint. Everything in the SDK takes one of these (or `host:port`). */
export interface NodeAddress {
  readonly host: string;
  readonly port: number;
}

export function formatAddress(address: NodeAddress): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/** `host:port`, `[v6]:port`; the port is required (1..65535). */
export function parseAddress(text: string): NodeAddress {
  const trimmed = text.trim();
  let host: string;
  let portText: string;
  if (trimmed.startsWith('[')) {
    const close = trimmed.indexOf(']');
    if (close < 0 || trimmed[close + 1] !== ':') throw invalid(text);
    host = trimmed.slice(1, close);
    portText = trimmed.slice(close + 2);
  } else {
    const colon = trimmed.lastIndexOf(':');
    if (colon <= 0 || trimmed.indexOf(':') !== colon) throw invalid(text);
    host = trimmed.slice(0, colon);
    portText = trimmed.slice(colon + 1);
  }
  if (!/^\d{1,5}$/.test(portText)) throw invalid(text);
  const port = Number(portText);
  if (host === '' || port < 1 || port > 65535) throw invalid(text);
  return { host, port };
}

/** Normalised key for comparing endpoints (`localhost` and `127.0.0.1` are one node). */
export function addressKey(address: NodeAddress): string {
  const host = address.host.toLowerCase();
  return formatAddress({ host: host === 'localhost' || host === '::1' ? '127.0.0.1' : host, port: address.port });
}

function invalid(text: string): ShoalInvalidArgumentError {
  return new ShoalInvalidArgumentError(`invalid server address '${text}' (expected host:port)`, ErrorCode.InvalidServerAddress);
}
