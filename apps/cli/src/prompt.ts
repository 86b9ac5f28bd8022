import { ShoalInvalidArgumentError } from '@shoal/client';
import { read } from 'read';
import type { StdinReader } from './stdin.js';

/**
 * The password prompt, as the reference CLI does it: when a user name is known and no password
 * was given (no `-p`, no `IGGY_PASSWORD`, none in the context), a terminal gets a prompt on stderr
 * with echo off; piped input gives its first line. Terminal handling (raw mode, muted echo,
 * Ctrl-C, restoring the terminal) is `read`, npm's own prompt package (maintained by the npm team,
 * one dependency, no install scripts): correct terminal handling is where hand-written prompts go
 * wrong.
 */
export interface PromptIo {
  readonly stdin: StdinReader;
  /** Where a terminal prompt is written (stderr). */
  readonly output?: NodeJS.WritableStream;
}

export async function promptPassword(io: PromptIo, username: string): Promise<string> {
  if (io.stdin.isTTY) {
    if (io.output === undefined) throw new ShoalInvalidArgumentError(`no password for '${username}' and no terminal to ask on`);
    let answer: string;
    try {
      answer = await read({ prompt: `Password for ${username}: `, silent: true, replace: '', input: io.stdin.stream as NodeJS.ReadableStream & { isTTY?: boolean }, output: io.output });
    } catch (error) {
      throw new ShoalInvalidArgumentError(`password prompt: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (answer === '') throw new ShoalInvalidArgumentError('empty password');
    return answer;
  }
  const line = await io.stdin.readLine();
  if (line === null || line === '') {
    throw new ShoalInvalidArgumentError(`no password for '${username}': pass --password, set IGGY_PASSWORD, or give it on stdin`);
  }
  return line;
}
