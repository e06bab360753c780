// The credential keys as the authorizer reads them: from Secrets Manager (the secret named by
// CREDENTIAL_KEYS_SECRET), through Powertools Parameters, cached for KEYS_MAX_AGE_SECONDS. Locally
// the very same call reaches the local run's Secrets Manager stand-in (AWS_ENDPOINT_URL_SECRETS_MANAGER,
// lib/local/secrets-manager-stand-in.ts): no code path differs between Lambda and a laptop.
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { parseCredentialKeys, type CredentialKeys } from './credentials.ts';

/**
 * How long an environment keeps the keys before asking again: a rotated secret reaches every warm
 * authorizer within this time (docs/DEPLOY.md, "Rotating the credential key"), and a warm
 * environment costs one GetSecretValue per this time ($0.05 per 10,000 calls).
 */
export const KEYS_MAX_AGE_SECONDS = 300;

let provider: SecretsProvider | undefined;
let parsed: { text: string; keys: CredentialKeys } | undefined;

/** The current credential keys (GetSecretValue at first use, then Powertools' cache). */
export async function credentialKeys(secretId: string): Promise<CredentialKeys> {
  // Timeouts below the authorizer's 10 s, like the DynamoDB client's (functions/store/dynamodb-client.ts).
  provider ??= new SecretsProvider({
    clientConfig: { maxAttempts: 3, requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true } },
  });
  const text = await provider.get(secretId, { maxAge: KEYS_MAX_AGE_SECONDS });
  if (typeof text !== 'string') throw new Error(`The secret ${secretId} holds no SecretString`);
  // Parsed once per value, not per check.
  if (parsed?.text !== text) parsed = { text, keys: parseCredentialKeys(text) };
  return parsed.keys;
}
