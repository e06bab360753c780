// HTTP Basic authentication (RFC 7617) against the users store, with a small in-memory cache.
import { createHash } from 'node:crypto';
import { verifyPassword } from './passwords.ts';
import type { Role } from './routes.ts';
import { USERNAME_PATTERN, type UsersStore } from './users-store.ts';

export interface Principal {
  username: string;
  role: Role;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict RFC 7617 parsing: `Basic <base64(user-id ":" password)>`, split at the first colon. */
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
  if (!USERNAME_PATTERN.test(username) || password.length === 0 || password.length > 1024) return undefined;
  return { username, password };
}

/**
 * A successful verification is remembered for `cacheTtlSeconds`, keyed by a SHA-256 of the
 * Authorization header (never the header itself), so a warm authorizer skips scrypt. Failures
 * are not cached. A removed user or changed password keeps working until this TTL and API
 * Gateway's authorizer cache TTL have both run out.
 */
export class BasicAuthenticator {
  private readonly cache = new Map<string, { principal: Principal; expiresAt: number }>();
  private static readonly MAX_CACHE_ENTRIES = 1000;

  private readonly users: UsersStore;
  private readonly cacheTtlSeconds: number;

  constructor(users: UsersStore, cacheTtlSeconds: number) {
    this.users = users;
    this.cacheTtlSeconds = cacheTtlSeconds;
  }

  async authenticate(authorizationHeader: string | undefined): Promise<Principal | undefined> {
    const credentials = parseBasicCredentials(authorizationHeader);
    if (!credentials) return undefined;
    const cacheKey = createHash('sha256').update(authorizationHeader ?? '').digest('base64');
    const cached = this.cache.get(cacheKey);
    if (cached && cached.expiresAt > Date.now()) return cached.principal;

    const user = await this.users.getUser(credentials.username);
    // Unknown users are verified against a dummy hash: the same cost as a wrong password.
    const valid = await verifyPassword(credentials.password, user?.passwordHash);
    if (!valid || !user) return undefined;

    const principal: Principal = { username: user.username, role: user.role };
    if (this.cache.size >= BasicAuthenticator.MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(cacheKey, { principal, expiresAt: Date.now() + this.cacheTtlSeconds * 1000 });
    return principal;
  }
}
