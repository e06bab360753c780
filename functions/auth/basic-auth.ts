// HTTP Basic authentication (RFC 7617) against the users store: one GetItem of the user's own item
// and one HMAC under the credential key, compared in constant time (credentials.ts). No memory of
// verified or refused credentials here: a check costs microseconds of CPU and one read, API
// Gateway's result cache already answers a repeated valid credential, and a removed user or
// changed password then stops working when that cache's TTL runs out (docs/DEPLOY.md, "Users").
import { isPossibleCredential, verifyCredential, type CredentialKeys } from './credentials.ts';
import type { Role } from '../routes.ts';
import { USERNAME_PATTERN, type UsersStore } from './users-store.ts';

export interface Principal {
  username: string;
  role: Role;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// ignoreBOM: a leading U+FEFF stays part of the user-id (and fails USERNAME_PATTERN) instead of
// being silently dropped, so `\uFEFFadmin` is not `admin`.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Strict RFC 7617 parsing: `Basic <base64(user-id ":" password)>`, split at the first colon. The
 * user-id is compared exactly (USERNAME_PATTERN is ASCII, so no invisible character or other
 * Unicode form of a name gets through); a password that could never have been set (a control or
 * format character, credentials.ts) is refused here, before any lookup.
 */
export function parseBasicCredentials(header: string | undefined): { username: string; password: string } | undefined {
  const match = /^Basic ([^\s]+)$/i.exec(header?.trim() ?? '');
  const encoded = match?.[1];
  if (!encoded || encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined;
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  if (!USERNAME_PATTERN.test(username) || !isPossibleCredential(password)) return undefined;
  return { username, password };
}

export class BasicAuthenticator {
  private readonly users: UsersStore;
  private readonly keys: () => Promise<CredentialKeys>;

  /** `keys`: the credential keys (cached by their source: credential-keys.ts). */
  constructor(users: UsersStore, keys: () => Promise<CredentialKeys>) {
    this.users = users;
    this.keys = keys;
  }

  async authenticate(authorizationHeader: string | undefined): Promise<Principal | undefined> {
    const credentials = parseBasicCredentials(authorizationHeader);
    if (!credentials) return undefined;
    // Both reads at once: on a cold start the key's GetSecretValue and the user's GetItem overlap.
    const [keys, user] = await Promise.all([this.keys(), this.users.getUser(credentials.username)]);
    // An unknown user is checked against no hash: the same MAC and comparison as a wrong password.
    if (!verifyCredential(credentials.password, user?.passwordHash, keys) || !user) return undefined;
    return { username: user.username, role: user.role };
  }
}
