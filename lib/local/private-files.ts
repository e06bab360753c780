// Files of the local run that hold what other users of the machine must not read (queued
// deliveries, the KMS stand-in's key, the stream checkpoint): a directory of mode 0700 holding
// files of mode 0600, as the credential keys' file is (lib/local/credential-keys-file.ts).
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Makes `directory` (and its parents) if missing, and makes it and the files in it private, also when an earlier run left them readable. */
export function privateDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  chmodSync(directory, 0o700);
  for (const entry of readdirSync(directory, { withFileTypes: true })) if (entry.isFile()) chmodSync(join(directory, entry.name), 0o600);
}

/** Writes `file` whole (a temporary file renamed over it), mode 0600, in a private directory. */
export function writePrivateFile(file: string, content: string | Buffer): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.tmp`;
  // A temporary file an interrupted write left behind keeps its mode: start afresh.
  rmSync(temporary, { force: true });
  writeFileSync(temporary, content, { mode: 0o600 });
  renameSync(temporary, file);
}
