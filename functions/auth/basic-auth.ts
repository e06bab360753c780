// HTTP Basic authentication (RFC 7617) against the users store, with small in-memory caches and
// fair admission to scrypt (docs/RELIABILITY.md, "Brute force"; docs/DEPLOY.md, "Logins under a flood").
import { createHmac, randomBytes } from 'node:crypto';
import { FairQueue, QueueBusyError } from './fair-queue.ts';
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
  /** Concurrent scrypt verifications (3), of which suspect ones (unknown users, recent failures) may hold 1. */
  verificationSlots?: number;
}

/**
 * Caches, keyed by an HMAC of the whole Authorization value under a key made at start-up and never
 * stored (so neither the value nor a fast hash of a password exists anywhere but in this process):
 * - a verified value for `cacheTtlSeconds`, so a warm authorizer skips scrypt; a removed user or
 *   changed password keeps working until this TTL and API Gateway's have both run out;
 * - a wrong value (wrong password or unknown user alike, so the cache tells nothing about which
 *   users exist) for `negativeCacheTtlSeconds`, so a client repeating a wrong password costs one
 *   scrypt, not one per request.
 * Concurrent requests with the same value share one verification. Verifications run through a
 * FairQueue keyed by username (all unknown usernames share one key); unknown users and users with
 * a wrong password in the last minute are suspect, held to one slot used only while no other
 * verification runs or waits,
 * so a flood of wrong passwords never delays the login of a user it is not aimed at by more than
 * about one verification. Deployed, an instance runs one invocation at a time and no queue
 * forms; locally every invocation shares one process and its CPUs, and this is what keeps them fair.
 */
export class BasicAuthenticator {
  private static readonly MAX_CACHE_ENTRIES = 1000;
  private static readonly MAX_NEGATIVE_ENTRIES = 10_000;
  private static readonly SUSPECT_MS = 60_000;

  private readonly cacheKeySecret = randomBytes(32);
  private readonly cache = new Map<string, { principal: Principal; expiresAt: number }>();
  private readonly rejected = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<Principal | undefined>>();
  /** Usernames whose password was wrong lately (until when): their verifications are suspect. */
  private readonly recentFailures = new Map<string, number>();
  private readonly verifications: FairQueue;
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
    // Three slots, within libuv's four threads (scrypt runs there; one stays free for other work).
    // On a shared CPU more threads get more of it, and the one suspect slot holds a flood of wrong
    // passwords to one thread's worth. Each key may have as many waiting as there are slots, and
    // nobody waits past 8 s, within the authorizer's 10 s timeout: a verification that finishes
    // after the gateway has answered 503 is not lost, its result is cached for the client's retry.
    const slots = settings.verificationSlots ?? 3;
    this.verifications = new FairQueue({ slots, suspectSlots: 1, maxWaitingPerKey: slots, maxWaitMs: 8_000 });
  }

  async authenticate(authorizationHeader: string | undefined): Promise<Principal | undefined> {
    const credentials = parseBasicCredentials(authorizationHeader);
    if (!credentials) return undefined;
    const key = createHmac('sha256', this.cacheKeySecret).update(authorizationHeader ?? '').digest('base64');
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) return cached.principal;
    const rejectedUntil = this.rejected.get(key);
    if (rejectedUntil !== undefined && rejectedUntil > now) return undefined;

    let verification = this.inFlight.get(key);
    if (!verification) {
      verification = this.verify(credentials.username, credentials.password, key).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, verification);
    }
    return verification;
  }

  private async verify(username: string, password: string, key: string): Promise<Principal | undefined> {
    // A user whose password was wrong in the last minute is suspect; when its key already has as
    // many waiting as allowed, the request is turned away before it costs even a read.
    const failedUntil = this.recentFailures.get(username);
    const failing = failedUntil !== undefined && failedUntil > Date.now();
    if (failing && this.verifications.isFull(`user:${username}`, true)) throw new QueueBusyError('Too many verifications waiting for this key');
    const user = await this.users.getUser(username);
    // Unknown users are verified against a dummy hash: the same cost as a wrong password. They
    // share one key and are always suspect.
    const suspect = !user || failing;
    const valid = await this.verifications.run(
      user ? `user:${username}` : 'unknown',
      () => {
        this.verificationsStarted++;
        return verifyPassword(password, user?.passwordHash);
      },
      suspect,
    );
    if (!valid || !user) {
      remember(this.rejected, key, Date.now() + this.negativeCacheTtlMs, BasicAuthenticator.MAX_NEGATIVE_ENTRIES);
      if (user) remember(this.recentFailures, username, Date.now() + BasicAuthenticator.SUSPECT_MS, BasicAuthenticator.MAX_NEGATIVE_ENTRIES);
      return undefined;
    }
    const principal: Principal = { username: user.username, role: user.role };
    this.rejected.delete(key);
    this.recentFailures.delete(username);
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
