// Credentials (functions/auth/credentials.ts, basic-auth.ts): what a chosen credential may hold,
// what a login may present, and the keyed hash: a table alone verifies nothing, the key can rotate.
import fc from 'fast-check';
import { parseBasicCredentials } from '../../functions/auth/basic-auth.ts';
import {
  chosenCredentialProblem,
  credentialKeyId,
  generateCredential,
  hashCredential,
  isPossibleCredential,
  MIN_CHOSEN_CREDENTIAL_LENGTH,
  newCredentialKeysText,
  parseCredentialKeys,
  verifyCredential,
  type CredentialKeys,
} from '../../functions/auth/credentials.ts';

const GOOD = 'correct-horse-battery-staple';
const encode = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;
const keyText = (seed: string) => seed.repeat(64).slice(0, 64);
const ring = (current: string, keys: Record<string, string>): CredentialKeys => parseCredentialKeys(JSON.stringify({ current, ...keys }));

describe('credentials an operator chooses', () => {
  test.each([
    ['NUL', `${GOOD}\u0000`],
    ['NUL inside', `correct\u0000horse-battery-staple`],
    ['tab (C0)', `${GOOD}\t`],
    ['line feed', `correct\nhorse-battery-staple`],
    ['escape', `\u001b[31m${GOOD}`],
    ['DEL', `${GOOD}\u007f`],
    ['C1 (NEL)', `${GOOD}\u0085`],
    ['C1 (CSI)', `${GOOD}\u009b`],
    ['byte order mark', `\ufeff${GOOD}`],
    ['zero-width space', `correct\u200bhorse-battery-staple`],
    ['zero-width joiner', `${GOOD}\u200d`],
    ['soft hyphen', `correct\u00adhorse-battery-staple`],
    ['right-to-left override', `${GOOD}\u202e`],
    ['word joiner', `${GOOD}\u2060`],
    ['lone surrogate', `${GOOD}\ud800`],
  ])('one holding a %s is refused when set and impossible at login', (_, password) => {
    expect(chosenCredentialProblem(password)).toMatch(/control or invisible/);
    expect(isPossibleCredential(password)).toBe(false);
  });

  test(`need at least ${MIN_CHOSEN_CREDENTIAL_LENGTH} characters (after NFC, not UTF-16 units), refused with one sentence, and nothing else`, () => {
    for (const short of [
      'x'.repeat(MIN_CHOSEN_CREDENTIAL_LENGTH - 1),
      '🦕'.repeat(MIN_CHOSEN_CREDENTIAL_LENGTH - 1),
      'e\u0301'.repeat(19),
    ]) {
      const problem = chosenCredentialProblem(short);
      expect(problem).toMatch(/^A chosen password must have at least 20 characters \(this one has 19\)[^.]*\.$/);
    }
    expect(chosenCredentialProblem('x'.repeat(1025))).toMatch(/at most/);
    // No rule but the length: any 20 visible characters, letters only, spaces, other scripts.
    for (const password of [
      'x'.repeat(20),
      '🦕'.repeat(20),
      'mot de passe é à ü ok',
      'пароль-пароль-пароль',
      '密码密码密码密码密码密码密码密码密码密码',
    ])
      expect(chosenCredentialProblem(password)).toBeUndefined();
  });
});

describe('generated credentials', () => {
  test('have 192 random bits: 32 base64url characters, never twice the same', () => {
    const seen = new Set(Array.from({ length: 1000 }, generateCredential));
    expect(seen.size).toBe(1000);
    for (const credential of seen) expect(credential).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
});

describe('the keyed hash', () => {
  const keys = ring('k1', { k1: keyText('a') });

  test('is hmac-sha256$<key id>$<MAC>, verifies the credential it was made from and nothing else', () => {
    const stored = hashCredential(GOOD, keys);
    expect(stored).toMatch(/^hmac-sha256\$k1\$[A-Za-z0-9+/]{43}=$/);
    expect(credentialKeyId(stored)).toBe('k1');
    expect(verifyCredential(GOOD, stored, keys)).toBe(true);
    for (const presented of [`${GOOD}x`, GOOD.slice(0, -1), GOOD.toUpperCase(), `${GOOD}\u0000`, `\ufeff${GOOD}`, ''])
      expect(verifyCredential(presented, stored, keys)).toBe(false);
  });

  test('a table alone verifies nothing: without the key (any other key), not even the right credential matches', () => {
    const stored = hashCredential(GOOD, keys);
    // Whoever holds the table but guesses the key: another key of the same id, or none at all.
    expect(verifyCredential(GOOD, stored, ring('k1', { k1: keyText('b') }))).toBe(false);
    expect(verifyCredential(GOOD, stored, parseCredentialKeys(newCredentialKeysText()))).toBe(false);
    // A stored hash is not the credential, and the hash of the credential without a key is not the stored one.
    expect(verifyCredential(stored, stored, keys)).toBe(false);
    expect(stored).not.toContain(Buffer.from(GOOD).toString('base64'));
  });

  test('rotation: a hash under an older key verifies while that key is known, and stops when it is removed', () => {
    const old = hashCredential(GOOD, keys);
    const rotated = ring('k2', { k1: keyText('a'), k2: keyText('c') });
    expect(verifyCredential(GOOD, old, rotated)).toBe(true);
    const reissued = hashCredential(GOOD, rotated);
    expect(credentialKeyId(reissued)).toBe('k2');
    expect(verifyCredential(GOOD, reissued, rotated)).toBe(true);
    const withoutOld = ring('k2', { k2: keyText('c') });
    expect(verifyCredential(GOOD, old, withoutOld)).toBe(false);
    expect(verifyCredential(GOOD, reissued, withoutOld)).toBe(true);
  });

  test('an old scrypt hash, a missing hash and a malformed one never match', () => {
    const scrypt = `scrypt$131072$8$1$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;
    for (const stored of [
      scrypt,
      undefined,
      'hmac-sha256$k1$',
      'hmac-sha256$k1$AAAA',
      'hmac-sha256$../k1$AAAA',
      `${hashCredential(GOOD, keys)}$x`,
    ]) {
      expect(verifyCredential(GOOD, stored, keys)).toBe(false);
    }
    expect(credentialKeyId(scrypt)).toBeUndefined();
  });

  // What an unknown user costs beside a wrong password (one MAC and one comparison, in CPU time)
  // is measured through the authorizer in test/reliability/auth-hardening.test.ts; here, that the
  // unknown user's path refuses every credential, as a wrong password's does.
  test('an unknown user (no stored hash) and a wrong password are refused alike, for any credential', () => {
    const stored = hashCredential(GOOD, keys);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }), (credential) => {
        fc.pre(credential.normalize('NFC') !== GOOD);
        expect(verifyCredential(credential, undefined, keys)).toBe(false);
        expect(verifyCredential(credential, stored, keys)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  test('the NFC and NFD forms of a credential are the same credential', () => {
    expect(
      verifyCredential(
        'cafe\u0301-cafe\u0301-cafe\u0301-cafe\u0301',
        hashCredential('caf\u00e9-caf\u00e9-caf\u00e9-caf\u00e9', keys),
        keys,
      ),
    ).toBe(true);
  });
});

describe('the credential keys', () => {
  test('are the shape the stack generates: {"current":"k1","k1":"<64 letters and digits>"}', () => {
    const keys = parseCredentialKeys(JSON.stringify({ current: 'k1', k1: 'A1b2'.repeat(16) }));
    expect(keys.current).toBe('k1');
    expect([...keys.keys.keys()]).toEqual(['k1']);
    expect(parseCredentialKeys(newCredentialKeysText()).current).toBe('k1');
  });

  test.each([
    ['not JSON', 'k1'],
    ['no current', JSON.stringify({ k1: keyText('a') })],
    ['a current that names no key', JSON.stringify({ current: 'k2', k1: keyText('a') })],
    ['a short key', JSON.stringify({ current: 'k1', k1: 'short' })],
    ['a key id with a $', JSON.stringify({ current: 'k$1', k$1: keyText('a') })],
  ])('are refused with %s, without showing a key', (_, text) => {
    expect(() => parseCredentialKeys(text)).toThrow(/credential key/);
    try {
      parseCredentialKeys(text);
    } catch (error) {
      expect((error as Error).message).not.toContain(keyText('a'));
    }
  });
});

describe('usernames and passwords presented at login', () => {
  test.each([
    ['a BOM before the username', '\ufeffadmin'],
    ['a zero-width space inside it', 'ad\u200bmin'],
    ['a soft hyphen inside it', 'ad\u00admin'],
    ['fullwidth letters', 'ａｄｍｉｎ'],
    ['a decomposed letter', 'rene\u0301'],
    ['a precomposed letter', 'ren\u00e9'],
    ['a trailing NUL', 'admin\u0000'],
    ['a leading space', ' admin'],
  ])('%s names no user', (_, username) => {
    expect(parseBasicCredentials(encode(`${username}:${GOOD}`))).toBeUndefined();
  });

  test('a leading BOM in the decoded credentials is not dropped', () => {
    const header = `Basic ${Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`admin:${GOOD}`)]).toString('base64')}`;
    expect(parseBasicCredentials(header)).toBeUndefined();
    expect(parseBasicCredentials(encode(`admin:${GOOD}`))).toEqual({ username: 'admin', password: GOOD });
  });

  test.each([`${GOOD}\u0000`, `${GOOD}\u0000\u0000`, `\ufeff${GOOD}`, `${GOOD}\u007f`, `${GOOD}\u200b`])(
    'a password %j is refused before any lookup',
    (password) => {
      expect(parseBasicCredentials(encode(`admin:${password}`))).toBeUndefined();
    },
  );
});
