// Password hashing with scrypt from node:crypto at OWASP's recommended cost (N=2^17, r=8, p=1).
// The parameters are stored with each hash, so they can be raised later without breaking logins.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const SCRYPT_PARAMETERS = { N: 2 ** 17, r: 8, p: 1, keyLength: 32, saltLength: 16 } as const;
export const MIN_PASSWORD_LENGTH = 12;
/** Characters (code points), after NFC normalisation; also bounds what one login may make scrypt hash. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * Control characters (C0, DEL, C1: `\p{Cc}`), format characters (`\p{Cf}`: BOM, zero-width space
 * and joiners, soft hyphen, bidirectional marks) and lone surrogates (`\p{Cs}`). None can be typed
 * visibly, so a password holding one is a copy-and-paste or file-encoding accident (a BOM from an
 * editor), and NUL is worse: scrypt's HMAC pads its key with zero bytes, so `secret` and
 * `secret\0\0` derive the same key. Such a password is refused when set and never matches at login.
 * The price: emoji sequences joined by U+200D (ZWJ) cannot be part of a password.
 */
const INVISIBLE_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}]/u;

/** Why `password` cannot be set, or undefined when it can. */
export function passwordProblem(password: string): string | undefined {
  const length = Array.from(password.normalize('NFC')).length;
  if (length < MIN_PASSWORD_LENGTH) return `The password must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (length > MAX_PASSWORD_LENGTH) return `The password must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (INVISIBLE_CHARACTER.test(password))
    return 'The password must not contain control or invisible format characters (NUL, tab, BOM, zero-width space, ...)';
  return undefined;
}

/** Whether a presented password could ever have been set: one that could not is refused without hashing. */
export function isPossiblePassword(password: string): boolean {
  return password.length > 0 && password.length <= 4 * MAX_PASSWORD_LENGTH && !INVISIBLE_CHARACTER.test(password);
}

function deriveKey(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  // N=2^17 with r=8 needs 128 MiB, above Node's 32 MiB default `maxmem`.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$<N>$<r>$<p>$<salt base64>$<key base64>`. Throws for a password passwordProblem() refuses. */
export async function hashPassword(password: string): Promise<string> {
  const problem = passwordProblem(password);
  if (problem) throw new Error(problem);
  const { N, r, p, keyLength, saltLength } = SCRYPT_PARAMETERS;
  const salt = randomBytes(saltLength);
  const key = await deriveKey(password, salt, N, r, p, keyLength);
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

// Verified against when the user does not exist, so that an unknown user costs the same time
// as a wrong password and response timing does not reveal which usernames exist.
const DUMMY_HASH = `scrypt$${SCRYPT_PARAMETERS.N}$${SCRYPT_PARAMETERS.r}$${SCRYPT_PARAMETERS.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;

/**
 * Whether `password` is the one `storedHash` was made from. A password holding a control or format
 * character never matches (see INVISIBLE_CHARACTER), whatever the hash; the caller refuses it before
 * any scrypt (isPossiblePassword), this check keeps the rule true for every other caller.
 */
export async function verifyPassword(password: string, storedHash: string | undefined): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = (storedHash ?? DUMMY_HASH).split('$');
  if (scheme !== 'scrypt' || !N || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await deriveKey(password, Buffer.from(salt, 'base64'), Number(N), Number(r), Number(p), expected.length);
  return timingSafeEqual(actual, expected) && storedHash !== undefined && isPossiblePassword(password);
}
