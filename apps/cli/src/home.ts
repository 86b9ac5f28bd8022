import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The CLI's home folder, `$SHOAL_HOME` (default `~/.shoal`, mode 0700): the contexts
 * (`contexts.toml`, `.active_context`) and the stored login session (`session.json`). Files that
 * may hold secrets are written mode 0600 through a temporary file and a rename, so a reader never
 * sees half a file and the secret is never readable by others, not even for a moment.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export function shoalHome(env: Env): string {
  const fromEnv = env['SHOAL_HOME'];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(homedir(), '.shoal');
}

export function homeFile(env: Env, name: string): string {
  return join(shoalHome(env), name);
}

/** Writes `text` to `$SHOAL_HOME/<name>` with mode 0600 (the folder 0700); returns the path. */
export function writePrivateFile(env: Env, name: string, text: string): string {
  const dir = shoalHome(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, name);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}

export function readHomeFile(env: Env, name: string): string | null {
  const path = homeFile(env, name);
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

export function removeHomeFile(env: Env, name: string): boolean {
  const path = homeFile(env, name);
  if (!existsSync(path)) return false;
  rmSync(path);
  return true;
}
