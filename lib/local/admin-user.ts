// A local run's first user: on first start, `admin` (editor) with MUSEUM_ADMIN_PASSWORD or a
// generated password, which the run prints once. Users an older release stored with scrypt are
// pointed out: they cannot log in until re-issued.
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { generateCredential, hashCredential } from '../../functions/auth/credentials.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { readCredentialKeysFile } from './credential-keys-file.ts';
import { localClient } from './dynamodb-local.ts';
import { localTableNames } from './local-environment.ts';

/**
 * On first start, user `admin` (editor) with `adminPassword` (MUSEUM_ADMIN_PASSWORD: at least 20
 * characters, checked with the settings) or a generated one (192 random bits) printed once.
 */
export async function ensureAdminUser(
  keysFile: string,
  adminPassword: string | undefined,
  say: (line: string) => void,
): Promise<{ password: string; generated: boolean } | undefined> {
  const client = localClient(process.env.AWS_ENDPOINT_URL_DYNAMODB ?? '');
  try {
    const users = new UsersStore(createDocumentClient(client), localTableNames.events);
    const existing = await users.listUsers();
    const older = existing.filter((user) => user.keyId === undefined).length;
    // Stored by a release that hashed with scrypt: they cannot log in until re-issued.
    if (older > 0)
      say(
        `  ${older} user(s) stored by an older release cannot log in: run npm run users -- migrate (docs/DEPLOY.md, "Migrating users stored with scrypt")`,
      );
    if (existing.some((user) => user.username === 'admin')) return undefined;
    const password = adminPassword ?? generateCredential();
    const passwordHash = hashCredential(password, await readCredentialKeysFile(keysFile));
    await users.putUser({ username: 'admin', role: 'editor', passwordHash }, 'create');
    return { password, generated: !adminPassword };
  } finally {
    client.destroy();
  }
}
