// The local run's credential keys: a file holding the very JSON the deployed secret holds
// (functions/auth/credentials.ts), created with one random key at first start (mode 0600), served
// to the functions by the Secrets Manager stand-in (secrets-manager-stand-in.ts) and read directly by
// the users CLI. Where it lives: `<data directory>/credential-keys.json` (also for a run on
// DYNAMODB_ENDPOINT), or, for an in-memory run, in that run's temporary directory, gone with it.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { newCredentialKeysText, parseCredentialKeys, type CredentialKeys } from '../../functions/auth/credentials.ts';

export const CREDENTIAL_KEYS_FILE = 'credential-keys.json';

/** The key file of a data directory, or of an in-memory run's temporary directory. */
export function credentialKeysFileIn(directory: string): string {
  return join(directory, CREDENTIAL_KEYS_FILE);
}

/** Creates the key file with one new key unless it exists (its directory too, mode 0700). */
export async function ensureCredentialKeysFile(file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  try {
    await writeFile(file, newCredentialKeysText(), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** The keys in `file`; an error names the file (never a key). */
export async function readCredentialKeysFile(file: string): Promise<CredentialKeys> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`Cannot read the credential keys in ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return parseCredentialKeys(text);
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}
