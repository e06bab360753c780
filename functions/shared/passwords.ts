// Password hashing with scrypt from node:crypto at OWASP's recommended cost (N=2^17, r=8, p=1).
// The parameters are stored with each hash, so they can be raised later without breaking logins.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const SCRYPT_PARAMETERS = { N: 2 ** 17, r: 8, p: 1, keyLength: 32, saltLength: 16 } as const;
export const MIN_PASSWORD_LENGTH = 12;

function deriveKey(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  // N=2^17 with r=8 needs 128 MiB, above Node's 32 MiB default `maxmem`.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$<N>$<r>$<p>$<salt base64>$<key base64>` */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keyLength, saltLength } = SCRYPT_PARAMETERS;
  const salt = randomBytes(saltLength);
  const key = await deriveKey(password, salt, N, r, p, keyLength);
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

// Verified against when the user does not exist, so that an unknown user costs the same time
// as a wrong password and response timing does not reveal which usernames exist.
const DUMMY_HASH = `scrypt$${SCRYPT_PARAMETERS.N}$${SCRYPT_PARAMETERS.r}$${SCRYPT_PARAMETERS.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;

export async function verifyPassword(password: string, storedHash: string | undefined): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = (storedHash ?? DUMMY_HASH).split('$');
  if (scheme !== 'scrypt' || !N || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await deriveKey(password, Buffer.from(salt, 'base64'), Number(N), Number(r), Number(p), expected.length);
  return timingSafeEqual(actual, expected) && storedHash !== undefined;
}
