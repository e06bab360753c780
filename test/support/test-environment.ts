// Values the global setup hands to every test file through environment variables.
import { hashCredential } from '../../functions/auth/credentials.ts';
import { readCredentialKeysFile } from '../../lib/local/credential-keys-file.ts';
export const TEST_USERS = {
  editor: { username: 'admin', password: 'test-admin-password-of-20-or-more' },
  viewer: { username: 'visitor', password: 'test-viewer-password-of-20-or-more' },
} as const;

/**
 * `password`'s stored hash under the credential key of the tests' local APIs (the global setup's
 * key file), or of the key file given (a test's own local run).
 */
export async function testCredentialHash(password: string, keysFile = process.env.TEST_CREDENTIAL_KEYS_FILE): Promise<string> {
  if (!keysFile) throw new Error('Run these tests with `npm run test:system` (the global setup makes the credential key)');
  return hashCredential(password, await readCredentialKeysFile(keysFile));
}

export function testEnvironment() {
  const url = process.env.MUSEUM_API_URL;
  const dynamodbEndpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!url || !dynamodbEndpoint) throw new Error('Run these tests with `npm run test:system` (the global setup starts the local API)');
  return { url, dynamodbEndpoint, tableName: process.env.TEST_TABLE_NAME ?? '', logFile: process.env.TEST_LOCAL_API_LOG ?? '' };
}

/** The local API behind the fault proxy (the first one when injection is off): see global-setup.ts. */
export function injectedApiUrl(): string {
  return process.env.MUSEUM_INJECTED_API_URL ?? testEnvironment().url;
}
