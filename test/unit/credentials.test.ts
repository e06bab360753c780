// Credential rules (functions/auth/passwords.ts, basic-auth.ts): what a password may hold and
// what a login may present.
import { parseBasicCredentials } from '../../functions/auth/basic-auth.ts';
import { hashPassword, isPossiblePassword, MIN_PASSWORD_LENGTH, passwordProblem, verifyPassword } from '../../functions/auth/passwords.ts';

const GOOD = 'correct-horse-battery';
const encode = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('passwords that may be set', () => {
  test.each([
    ['NUL', `${GOOD}\u0000`],
    ['NUL inside', `correct\u0000horse-battery`],
    ['tab (C0)', `${GOOD}\t`],
    ['line feed', `correct\nhorse-battery`],
    ['escape', `\u001b[31m${GOOD}`],
    ['DEL', `${GOOD}\u007f`],
    ['C1 (NEL)', `${GOOD}\u0085`],
    ['C1 (CSI)', `${GOOD}\u009b`],
    ['byte order mark', `\ufeff${GOOD}`],
    ['zero-width space', `correct\u200bhorse-battery`],
    ['zero-width joiner', `${GOOD}\u200d`],
    ['soft hyphen', `correct\u00adhorse-battery`],
    ['right-to-left override', `${GOOD}\u202e`],
    ['word joiner', `${GOOD}\u2060`],
    ['lone surrogate', `${GOOD}\ud800`],
  ])('a password holding a %s is refused when set and impossible at login', async (_, password) => {
    expect(passwordProblem(password)).toMatch(/control or invisible/);
    expect(isPossiblePassword(password)).toBe(false);
    await expect(hashPassword(password)).rejects.toThrow(/control or invisible/);
  });

  test('length counts characters after NFC, not UTF-16 units', () => {
    expect(passwordProblem('🦕'.repeat(MIN_PASSWORD_LENGTH - 1))).toMatch(/at least/);
    expect(passwordProblem('🦕'.repeat(MIN_PASSWORD_LENGTH))).toBeUndefined();
    expect(passwordProblem('x'.repeat(1025))).toMatch(/at most/);
    // Visible non-ASCII is welcome: accents, other scripts, spaces between words.
    for (const password of ['mot de passe é à ü', 'пароль-пароль-1', '密码密码密码密码密码密码', 'e\u0301'.repeat(MIN_PASSWORD_LENGTH)]) {
      expect(passwordProblem(password)).toBeUndefined();
    }
  });

  test('a password followed by NUL bytes never matches (scrypt would derive the same key), nor one with a BOM', async () => {
    const stored = await hashPassword(GOOD);
    expect(await verifyPassword(GOOD, stored)).toBe(true);
    for (const presented of [`${GOOD}\u0000`, `${GOOD}\u0000\u0000\u0000`, `\ufeff${GOOD}`])
      expect(await verifyPassword(presented, stored)).toBe(false);
  }, 30_000);

  test('the NFC and NFD forms of a password are the same password (it is normalised before hashing)', async () => {
    const stored = await hashPassword('caf\u00e9-caf\u00e9-caf\u00e9');
    expect(await verifyPassword('cafe\u0301-cafe\u0301-cafe\u0301', stored)).toBe(true);
  }, 30_000);
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
    'a password %j is refused before any scrypt',
    (password) => {
      expect(parseBasicCredentials(encode(`admin:${password}`))).toBeUndefined();
    },
  );
});
