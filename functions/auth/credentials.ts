// API credentials: generated secrets of 192 random bits (or operator-chosen ones of at least 20
// characters), stored as an HMAC-SHA-256 under a credential key that lives outside the table
// (Secrets Manager deployed, a key file locally: credential-keys.ts), so a leaked table alone
// lets nobody test a guess. A fast keyed hash is right for high-entropy secrets; a slow password
// hash would only cost the service (docs/DEPLOY.md, "Credentials").
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The least an operator-chosen credential may have (MUSEUM_ADMIN_PASSWORD, `users add`/`passwd` on stdin): no other rule. */
export const MIN_CHOSEN_CREDENTIAL_LENGTH = 20;
/** Characters (code points), after NFC normalisation: bounds what one login may make the authorizer hash. */
export const MAX_CREDENTIAL_LENGTH = 1024;
/** Random bytes of a generated credential: 192 bits, 32 characters of base64url. */
const GENERATED_CREDENTIAL_BYTES = 24;
const SCHEME = 'hmac-sha256';

/**
 * Control characters (C0, DEL, C1: `\p{Cc}`), format characters (`\p{Cf}`: BOM, zero-width space
 * and joiners, soft hyphen, bidirectional marks) and lone surrogates (`\p{Cs}`). None can be typed
 * visibly, so a credential holding one is a copy-and-paste or file-encoding accident (a BOM from
 * an editor): refused when set, never matching at login.
 */
const INVISIBLE_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}]/u;

/** A new credential: 24 random bytes, base64url (no character a shell or a URL treats specially). */
export function generateCredential(): string {
  return randomBytes(GENERATED_CREDENTIAL_BYTES).toString('base64url');
}

/** Why an operator-chosen credential is refused (one sentence), or undefined when it is accepted. */
export function chosenCredentialProblem(credential: string): string | undefined {
  const length = Array.from(credential.normalize('NFC')).length;
  if (length < MIN_CHOSEN_CREDENTIAL_LENGTH)
    return `A chosen password must have at least ${MIN_CHOSEN_CREDENTIAL_LENGTH} characters (this one has ${length}); leave it out to get a generated one.`;
  if (length > MAX_CREDENTIAL_LENGTH) return `A chosen password must have at most ${MAX_CREDENTIAL_LENGTH} characters.`;
  if (INVISIBLE_CHARACTER.test(credential))
    return 'A chosen password must not contain control or invisible format characters (NUL, tab, BOM, zero-width space, ...).';
  return undefined;
}

/** Whether a presented credential could ever have been set: one that could not is refused without a lookup. */
export function isPossibleCredential(credential: string): boolean {
  return credential.length > 0 && credential.length <= 4 * MAX_CREDENTIAL_LENGTH && !INVISIBLE_CHARACTER.test(credential);
}

/**
 * The credential keys: several may be known (rotation), one is current (new hashes use it). The
 * secret's JSON, `{"current":"<id>","<id>":"<key text>",...}`, is the shape CloudFormation can
 * generate (generateSecretString with a template and one generated key: lib/cdk/credential-keys-secret.ts);
 * the key is the UTF-8 bytes of its text.
 */
export interface CredentialKeys {
  current: string;
  keys: ReadonlyMap<string, Buffer>;
}

/** A key id: what a stored hash names its key by. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
/** At least 256 bits of a generated key's text (64 of 62 symbols is 381 bits). */
const MIN_KEY_LENGTH = 32;

/** Reads the secret's JSON; throws a sentence naming what is wrong (never the key itself). */
export function parseCredentialKeys(text: string): CredentialKeys {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('The credential keys are not JSON: {"current":"<id>","<id>":"<key>"}');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('The credential keys are not a JSON object');
  const { current, ...entries } = value as Record<string, unknown>;
  const keys = new Map<string, Buffer>();
  for (const [id, key] of Object.entries(entries)) {
    if (!KEY_ID_PATTERN.test(id))
      throw new Error(`The credential key id ${JSON.stringify(id)} is not letters, digits, _ and - (at most 32)`);
    if (typeof key !== 'string' || key.length < MIN_KEY_LENGTH)
      throw new Error(`The credential key ${id} is not a string of at least ${MIN_KEY_LENGTH} characters`);
    keys.set(id, Buffer.from(key, 'utf8'));
  }
  if (typeof current !== 'string' || !keys.has(current)) throw new Error('The credential keys\' "current" does not name one of its keys');
  return { current, keys };
}

/** A new key ring's JSON with one key (the local key file's first content; the stack generates its own). */
export function newCredentialKeysText(keyId = 'k1'): string {
  return `${JSON.stringify({ current: keyId, [keyId]: randomBytes(48).toString('base64url') })}\n`;
}

function mac(credential: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(credential.normalize('NFC'), 'utf8').digest();
}

/** `hmac-sha256$<keyId>$<base64 MAC>` under the current key. Throws for a credential that could not be presented. */
export function hashCredential(credential: string, keys: CredentialKeys): string {
  if (!isPossibleCredential(credential)) throw new Error('This credential could never be presented');
  return [SCHEME, keys.current, mac(credential, keys.keys.get(keys.current) as Buffer).toString('base64')].join('$');
}

/** The key id a stored hash was made with, or undefined when it is not a keyed hash (an old scrypt hash). */
export function credentialKeyId(storedHash: string): string | undefined {
  const [scheme, keyId, digest, ...rest] = storedHash.split('$');
  return scheme === SCHEME && keyId !== undefined && KEY_ID_PATTERN.test(keyId) && digest && rest.length === 0 ? keyId : undefined;
}

const ZERO_MAC = Buffer.alloc(32).toString('base64');

/**
 * Whether `credential` is the one `storedHash` was made from. The same work whatever the outcome:
 * an unknown user (no hash), a hash under a removed key or of another scheme are replaced by a
 * dummy hash under the current key, which takes the very steps a real one does (parse, one MAC,
 * a constant-time comparison), so timing tells nothing.
 */
export function verifyCredential(credential: string, storedHash: string | undefined, keys: CredentialKeys): boolean {
  const dummy = [SCHEME, keys.current, ZERO_MAC].join('$');
  const candidate = storedHash ?? dummy;
  const usable = storedHash !== undefined && keys.keys.has(credentialKeyId(candidate) ?? '');
  const compared = usable ? candidate : dummy;
  const stored = Buffer.from(compared.split('$')[2] ?? '', 'base64');
  const actual = mac(credential, keys.keys.get(credentialKeyId(compared) as string) as Buffer);
  const equal = stored.length === actual.length && timingSafeEqual(stored, actual);
  return equal && usable && isPossibleCredential(credential);
}
