// A feed's token is stored only as its keyed hash: HMAC-SHA-256 under the credential keys that
// hash the API's passwords (functions/auth/credentials.ts: Secrets Manager deployed, the local
// run's key file served by its stand-in), so a leaked table alone yields no working address. The
// hash names its key (`<keyId>$<MAC>`): a token made before a key rotation is looked up under
// the key it was made with, for as long as the ring keeps that key.
import { createHmac } from 'node:crypto';
import type { CredentialKeys } from '../auth/credentials.ts';
import { FEED_TOKEN_PATTERN } from './feed-rules.ts';

function mac(token: string, key: Buffer): string {
  return createHmac('sha256', key).update(token, 'utf8').digest('base64url');
}

/** The stored form of a new token: its hash under the current key. */
export function feedTokenHash(token: string, keys: CredentialKeys): string {
  return `${keys.current}$${mac(token, keys.keys.get(keys.current) as Buffer)}`;
}

/**
 * The hashes a presented token may be stored under, the current key's first; none for what is no
 * token (the handler answers 404 without a read).
 */
export function candidateTokenHashes(token: string, keys: CredentialKeys): string[] {
  if (!FEED_TOKEN_PATTERN.test(token)) return [];
  const ids = [keys.current, ...[...keys.keys.keys()].filter((id) => id !== keys.current)];
  return ids.map((id) => `${id}$${mac(token, keys.keys.get(id) as Buffer)}`);
}
