import { loadVectorFile } from '../../../../test/support/fixtures.js';

export interface RequestVector {
  readonly name: string;
  readonly hex: string;
  readonly body_hex: string;
  readonly command_code: number;
  readonly inputs: Record<string, unknown>;
  readonly header: Record<string, unknown>;
  readonly rust_sdk_request_checksum: string;
}

export interface ReplyVector {
  readonly name: string;
  readonly hex: string;
  readonly header: Record<string, unknown>;
  readonly expected: {
    readonly outcome: 'ok' | 'error';
    readonly payload_hex?: string;
    readonly error_code?: number;
    readonly eviction_reason?: number;
  };
}

export interface ClientFrames {
  readonly requests: readonly RequestVector[];
  readonly replies: readonly ReplyVector[];
}

export function loadClientFrames(): ClientFrames {
  return loadVectorFile('client_frames.json') as ClientFrames;
}

export function requestVector(frames: ClientFrames, name: string): RequestVector {
  const found = frames.requests.find((r) => r.name === name);
  if (found === undefined) throw new Error(`request vector ${name} missing`);
  return found;
}

export function replyVector(frames: ClientFrames, name: string): ReplyVector {
  const found = frames.replies.find((r) => r.name === name);
  if (found === undefined) throw new Error(`reply vector ${name} missing`);
  return found;
}
