// The benchmark's credential key, as the local run keeps it: a key file served by the Secrets
// Manager stand-in (lib/local/secrets-manager-stand-in.ts), which the functions reach through
// AWS_ENDPOINT_URL_SECRETS_MANAGER (set here for this process and the parts it starts:
// function-environment.ts passes it on).
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashCredential } from '../../functions/auth/credentials.ts';
import { credentialKeysFileIn, ensureCredentialKeysFile, readCredentialKeysFile } from '../../lib/local/credential-keys-file.ts';
import { localCredentials } from '../../lib/local/dynamodb-local.ts';
import { LOCAL_CREDENTIAL_KEYS_SECRET, startSecretsManagerStandIn } from '../../lib/local/secrets-manager-stand-in.ts';

/** The variable through which the bench's parts learn the key file (to hash the users they add). */
const KEYS_FILE_VARIABLE = 'BENCH_CREDENTIAL_KEYS_FILE';

/** Starts the stand-in for the DynamoDB Local at `dynamodbEndpoint` (its key id); returns the stop. */
export async function startBenchCredentialKeys(dynamodbEndpoint: string): Promise<() => Promise<void>> {
  const directory = await mkdtemp(join(tmpdir(), 'museum-bench-keys-'));
  const file = credentialKeysFileIn(directory);
  await ensureCredentialKeysFile(file);
  const standIn = await startSecretsManagerStandIn({
    secrets: { [LOCAL_CREDENTIAL_KEYS_SECRET]: file },
    accessKeyId: localCredentials(dynamodbEndpoint).accessKeyId,
  });
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = standIn.endpoint;
  process.env[KEYS_FILE_VARIABLE] = file;
  return async () => {
    await standIn.close();
    await rm(directory, { recursive: true, force: true });
  };
}

/** The bench's key file's JSON (the authorizer floor gets it in its event: it reads one item, nothing else). */
export function benchCredentialKeysText(): string {
  return readFileSync(keysFile(), 'utf8');
}

function keysFile(): string {
  const file = process.env[KEYS_FILE_VARIABLE];
  if (!file) throw new Error('startBenchCredentialKeys() first');
  return file;
}

/** `password`'s stored hash under the bench's key. */
export async function benchCredentialHash(password: string): Promise<string> {
  return hashCredential(password, await readCredentialKeysFile(keysFile()));
}
