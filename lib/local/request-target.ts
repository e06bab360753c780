// The path and query of a request target, as the local gateway routes them.
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Built from the raw target with a fixed origin, so a target such as `//evil.example/v1.1/x`
 * stays a path (it is never read as a host); the absolute form (`http://host/path`, which
 * HTTP/1.1 servers must accept) keeps only its path. `dot-segment`: a `.` or `..` segment (either
 * percent-encoded too) names no resource of this API; the URL parser would resolve it
 * (`/v1.1/special-events/..` -> `/v1.1/`) into some other resource. `not-a-path`: neither form.
 */
export function parseTarget(target: string): URL | 'dot-segment' | 'not-a-path' {
  if (
    target
      .split('?', 1)[0]
      ?.split('/')
      .some((segment) => DOT_SEGMENT.test(segment))
  )
    return 'dot-segment';
  try {
    if (target.startsWith('/')) return new URL(`http://gateway.invalid${target}`);
    if (/^https?:\/\//i.test(target)) {
      const absolute = new URL(target);
      return new URL(`http://gateway.invalid${absolute.pathname}${absolute.search}`);
    }
  } catch {
    // not a URL
  }
  return 'not-a-path';
}

/**
 * The path API Gateway matches to a resource: `/v1.1/special-events/` is the resource
 * `/v1.1/special-events`, since one trailing slash does not name another resource.
 */
export function matchedResourcePath(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}
