/**
 * The `command` byte at header offset 60: one registry for both planes (cluster.mdx "Command
 * discriminants", replication-semantics.md §1.1). Values above 29 are not commands: the framing
 * layer tears the connection down on them (§1.2 step 1).
 */
export const Command = Object.freeze({
  Reserved: 0,
  Ping: 1,
  Pong: 2,
  PingClient: 3,
  PongClient: 4,
  Request: 5,
  Prepare: 6,
  PrepareOk: 7,
  Reply: 8,
  Commit: 9,
  StartViewChange: 10,
  DoViewChange: 11,
  StartView: 12,
  Eviction: 13,
  ReplicaHello: 14,
  ReplicaChallenge: 15,
  ReplicaFinish: 16,
  RequestStartView: 17,
  RequestPrepares: 18,
  RepairPrepare: 19,
  RepairDone: 20,
  RangeEvicted: 21,
  RequestStateTransfer: 22,
  StateTransferTarget: 23,
  RequestStateChunk: 24,
  StateChunk: 25,
  ForwardRegister: 26,
  ForwardRegisterResult: 27,
  ForwardLogout: 28,
  ForwardLogoutResult: 29,
} as const);

export type CommandName = keyof typeof Command;
export type Command = (typeof Command)[CommandName];

/** The highest declared command value; 30 and above are invalid bit patterns. */
export const COMMAND_MAX = 29;

/** Command value → name, index 0..29. */
export const COMMAND_NAMES: readonly CommandName[] = Object.freeze(
  (Object.keys(Command) as CommandName[]).sort((a, b) => Command[a] - Command[b]),
);

// Our bug if the registry has a hole or a duplicate.
for (let value = 0; value <= COMMAND_MAX; value++) {
  const name = COMMAND_NAMES[value];
  if (name === undefined || Command[name] !== value) throw new Error(`command registry broken at ${value}`);
}
if (COMMAND_NAMES.length !== COMMAND_MAX + 1) throw new Error('command registry has extra entries');

export function isCommand(value: number): value is Command {
  return Number.isInteger(value) && value >= 0 && value <= COMMAND_MAX;
}

/** The command's name, or undefined for a value outside 0..29. */
export function commandName(value: number): CommandName | undefined {
  return isCommand(value) ? COMMAND_NAMES[value] : undefined;
}

/**
 * Commands whose `checksum` is the frame seal (§2.2): 7, 9-12, 17, 18, 20-29. Prepare and
 * RepairPrepare carry the prepare identity instead; Request, Reply, Eviction and the handshake
 * frames carry nothing.
 */
const SEALED: readonly boolean[] = (() => {
  const sealed = new Array<boolean>(COMMAND_MAX + 1).fill(false);
  for (const c of [7, 9, 10, 11, 12, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]) sealed[c] = true;
  return Object.freeze(sealed);
})();

export function isSealedCommand(command: number): boolean {
  return SEALED[command] === true;
}

/** Prepare (6) and RepairPrepare (19): `checksum` is the prepare identity (§2.3). */
export function isPrepareCommand(command: number): boolean {
  return command === Command.Prepare || command === Command.RepairPrepare;
}

/** ReplicaHello, ReplicaChallenge, ReplicaFinish: raw handshake frames (§3.3). */
export function isHandshakeCommand(command: number): boolean {
  return command >= Command.ReplicaHello && command <= Command.ReplicaFinish;
}
