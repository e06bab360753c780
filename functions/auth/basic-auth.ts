// HTTP Basic authentication (RFC 7617) against the users store, with small in-memory caches
// (docs/RELIABILITY.md, "Brute force"; docs/DEPLOY.md, "Logins under a flood").
import { createHmac, randomBytes } from 'node:crypto';
import { isPossiblePassword, verifyPassword } from './passwords.ts';
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
 * format character, passwords.ts) is refused here, before any scrypt.
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
  if (!USERNAME_PATTERN.test(username) || !isPossiblePassword(password)) return undefined;
  return { username, password };
}

export interface BasicAuthenticatorOptions {
  /** How long a verified Authorization value is remembered (AUTH_CACHE_TTL_SECONDS, 60 s). */
  cacheTtlSeconds: number;
  /**
   * How long a wrong one is (default: as long as a right one): a user added, or a password set to
   * the very value a client kept sending, works for that client after at most this long.
   */
  negativeCacheTtlSeconds?: number;
}

/**
 * Caches, keyed by an HMAC of the whole Authorization value under a key made at start-up and never
 * stored (so neither the value nor a fast hash of a password exists anywhere but in this
 * execution environment):
 * - a verified value for `cacheTtlSeconds`, so a warm authorizer skips scrypt; a removed user or
 *   changed password keeps working until this TTL and API Gateway's have both run out;
 * - a wrong value (wrong password or unknown user alike, so the cache tells nothing about which
 *   users exist) for `negativeCacheTtlSeconds`, so a client repeating a wrong password costs one
 *   scrypt per environment, not one per request (API Gateway caches only allowing results).
 * An environment runs one invocation at a time (Lambda's model, and the local run's), so there is
 * no queue here: what bounds a flood is the stage's throttling and the authorizer's reserved
 * concurrency (docs/DEPLOY.md, "Logins under a flood of wrong passwords").
 */
export class BasicAuthenticator {
  private static readonly MAX_CACHE_ENTRIES = 1000;
  private static readonly MAX_NEGATIVE_ENTRIES = 10_000;

  private readonly cacheKeySecret = randomBytes(32);
  private readonly cache = new Map<string, { principal: Principal; expiresAt: number }>();
  private readonly rejected = new Map<string, number>();
  private readonly users: UsersStore;
  private readonly cacheTtlMs: number;
  private readonly negativeCacheTtlMs: number;
  /** scrypt verifications started (for tests and figures: a cache hit or a refused password starts none). */
  verificationsStarted = 0;

  constructor(users: UsersStore, options: BasicAuthenticatorOptions | number) {
    const settings = typeof options === 'number' ? { cacheTtlSeconds: options } : options;
    this.users = users;
    this.cacheTtlMs = settings.cacheTtlSeconds * 1000;
    this.negativeCacheTtlMs = (settings.negativeCacheTtlSeconds ?? settings.cacheTtlSeconds) * 1000;
  }

  async authenticate(authorizationHeader: string | undefined): Promise<Principal | undefined> {
    const credentials = parseBasicCredentials(authorizationHeader);
    if (!credentials) return undefined;
    const key = createHmac('sha256', this.cacheKeySecret)
      .update(authorizationHeader ?? '')
      .digest('base64');
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) return cached.principal;
    const rejectedUntil = this.rejected.get(key);
    if (rejectedUntil !== undefined && rejectedUntil > now) return undefined;

    const user = await this.users.getUser(credentials.username);
    // Unknown users are verified against a dummy hash: the same cost as a wrong password.
    this.verificationsStarted++;
    const valid = await verifyPassword(credentials.password, user?.passwordHash);
    if (!valid || !user) {
      remember(this.rejected, key, Date.now() + this.negativeCacheTtlMs, BasicAuthenticator.MAX_NEGATIVE_ENTRIES);
      return undefined;
    }
    const principal: Principal = { username: user.username, role: user.role };
    this.rejected.delete(key);
    remember(this.cache, key, { principal, expiresAt: Date.now() + this.cacheTtlMs }, BasicAuthenticator.MAX_CACHE_ENTRIES);
    return principal;
  }
}

/** Sets `key`, first dropping the oldest entry when the map is full (Map keeps insertion order). */
function remember<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.delete(key);
  if (map.size >= maxEntries) map.delete(map.keys().next().value as string);
  map.set(key, value);
}
