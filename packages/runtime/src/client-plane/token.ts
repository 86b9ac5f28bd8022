/**
 * The connection token: what a group owner (another thread) needs to send a reply back to the
 * right connection, and to notice that the connection is gone. It is the consensus core's
 * `ClientToken` (a number), so it rides effects and channel messages unchanged.
 *
 *   token = generation · 2^28 + slot · 2^8 + shard        (< 2^53: exact in a double)
 *
 *   shard       0..255     the shard that owns the socket (SHARDS_MAX = 256)
 *   slot        0..2^20-1  the connection's slot on that shard
 *   generation  0..2^25-1  bumped each time the slot is reused, so a late reply for a closed
 *                          connection is recognised and dropped instead of reaching its successor
 *
 * Token 0 is never handed out (generation starts at 1): it marks "nobody waits" (a disconnect
 * logout: the gateway's TOKEN_NONE). Slots from FORWARD_SLOT_BASE up name a request another
 * node forwarded to this shard (forwarding/channel-server.ts) rather than a connection: its
 * reply goes back on that channel.
 */
export const TOKEN_SLOTS_MAX = 2 ** 20;
export const TOKEN_GENERATION_MODULO = 2 ** 25;
/** Slots at and above this name forwarded requests, not connections (connection slots stay below). */
export const FORWARD_SLOT_BASE = 2 ** 19;

/** The token names a forwarded request (a forwarding channel answers it). */
export function isForwardToken(token: number): boolean {
  return tokenSlot(token) >= FORWARD_SLOT_BASE;
}

export function makeToken(shard: number, slot: number, generation: number): number {
  return generation * 2 ** 28 + slot * 2 ** 8 + shard;
}

export function tokenShard(token: number): number {
  return token % 256;
}

export function tokenSlot(token: number): number {
  return Math.floor(token / 256) % TOKEN_SLOTS_MAX;
}

export function tokenGeneration(token: number): number {
  return Math.floor(token / 2 ** 28);
}

/** The next generation for a reused slot (never 0). */
export function nextGeneration(generation: number): number {
  const next = (generation + 1) % TOKEN_GENERATION_MODULO;
  return next === 0 ? 1 : next;
}
