/**
 * Runs a handshake machine over a connected socket (plain TCP or TLS) under a deadline.
 *
 * On `established` the socket is PAUSED and every listener this driver added is removed, before
 * any later chunk can be emitted: bytes after the last handshake frame are either in the
 * returned `leftover` (same chunk) or still in the socket (kernel, or the stream's buffer), for
 * the next owner: a `PeerConnection` on this thread, or `detachForHandOff` for a worker.
 *
 * On `refused` the driver writes the reject frame if the rules call for one, ends the socket and
 * destroys it after `closeGraceMs`; otherwise it destroys at once. Deadline expiry destroys too.
 * The driver never throws on peer input.
 */
import type { Duplex } from 'node:stream';
import type { Deadline } from './deadline.js';
import type { HandshakeMachine, HandshakeRefusal, HandshakeStep } from './handshake-step.js';

export type HandshakeResult =
  | { readonly ok: true; readonly peer: number; readonly leftover: Uint8Array }
  | { readonly ok: false; readonly reason: HandshakeRefusal; readonly statusByte: number | null };

export function runHandshake(socket: Duplex, machine: HandshakeMachine, deadline: Deadline, closeGraceMs: number): Promise<HandshakeResult> {
  return new Promise<HandshakeResult>((resolve) => {
    let settled = false;
    const detach = (): void => {
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('end', onClose);
    };
    const refuse = (reason: HandshakeRefusal, statusByte: number | null, send: readonly Uint8Array[]): void => {
      if (settled) return;
      settled = true;
      detach();
      closeAfter(socket, send, closeGraceMs);
      resolve({ ok: false, reason, statusByte });
    };
    const apply = (step: HandshakeStep): void => {
      if (settled) return;
      if (step.kind === 'refused') {
        refuse(step.reason, step.statusByte, step.send);
        return;
      }
      for (const bytes of step.send) socket.write(bytes);
      if (step.kind === 'established') {
        settled = true;
        socket.pause();
        detach();
        resolve({ ok: true, peer: step.peer, leftover: step.leftover });
      }
    };
    function onData(chunk: Buffer): void {
      apply(machine.receive(chunk));
    }
    function onClose(): void {
      refuse('peer_closed', null, []);
    }
    deadline.onExpire(() => refuse('deadline', null, []));
    if (deadline.expired || socket.destroyed) return;
    socket.on('data', onData);
    socket.on('end', onClose);
    socket.on('close', onClose);
    socket.resume();
    apply(machine.start());
  });
}

/** Writes the last frames (a reject Challenge), half-closes, and destroys after the grace. */
export function closeAfter(socket: Duplex, send: readonly Uint8Array[], closeGraceMs: number): void {
  if (socket.destroyed) return;
  if (send.length === 0) {
    socket.destroy();
    return;
  }
  for (const bytes of send) socket.write(bytes);
  socket.end();
  const timer = setTimeout(() => socket.destroy(), closeGraceMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
