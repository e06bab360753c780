// Which route a request reaches, and what each resource answers: the route table's matching as
// API Gateway applies it, and the `Allow` and CORS method lists built from it. The table itself
// is functions/routes.ts; the local gateway, the handlers' 405 answers, the stack's preflights and
// the OpenAPI document read these.
import { routeMethods, routes, type HttpMethod, type Route } from './routes.ts';

/**
 * Matches a concrete path against the route table; returns the route and its path parameters.
 * As API Gateway does, the most specific resource wins: a literal segment before a path variable
 * (`/special-events/changes` before `/special-events/{eventId}`), "Routing API requests" in
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-routes.html; a
 * method the chosen resource lacks is its 405, never another resource's method.
 */
export function matchRoute(
  method: string,
  path: string,
): { route: Route; pathParameters: Record<string, string> } | { route: undefined; allowedMethods: HttpMethod[] } {
  const resource = [...resourceMethods().keys()]
    .filter((candidate) => resourcePattern(candidate).pattern.test(path))
    .sort(bySpecificity)[0];
  if (resource === undefined) return { route: undefined, allowedMethods: [] };
  const { pattern, names } = resourcePattern(resource);
  const match = pattern.exec(path) as RegExpExecArray;
  const resourceRoutes = routes.filter((route) => route.path === resource);
  const route = resourceRoutes.find((candidate) => routeMethods(candidate).includes(method));
  if (!route) return { route: undefined, allowedMethods: resourceRoutes.map((candidate) => candidate.method) };
  return { route, pathParameters: Object.fromEntries(names.map((name, i) => [name, safeDecode(match[i + 1] ?? '')])) };
}

function resourcePattern(resourcePath: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const pattern = new RegExp(
    `^${resourcePath
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const variable = /^\{([^}]+)\}$/.exec(part);
        if (!variable) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); // `/calendar.ics`: the dot is a dot
        names.push(variable[1] as string);
        return '([^/]+)';
      })
      .join('')}$`,
  );
  return { pattern, names };
}

/** Segment by segment, a literal before a path variable. */
function bySpecificity(a: string, b: string): number {
  const [left, right] = [a.split('/'), b.split('/')];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const variable = [left[i]?.startsWith('{'), right[i]?.startsWith('{')];
    if (variable[0] !== variable[1]) return variable[0] ? 1 : -1;
  }
  return 0;
}

/** The resource paths of the route table, each with the methods it has (the `Allow` header of a 405). */
export function resourceMethods(): Map<string, HttpMethod[]> {
  const byPath = new Map<string, HttpMethod[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route.method]);
  return byPath;
}

/** Every method a resource answers, in one fixed order, so `Allow` reads the same on every 405 and OPTIONS. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * The `Allow` list of a resource with `methods` (RFC 9110 §10.2.1): HEAD wherever GET is (§9.3.2:
 * the same answer without content) and OPTIONS everywhere, in ALLOW_ORDER.
 */
export function allowedMethods(methods: readonly string[]): string[] {
  const all = new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS']);
  return ALLOW_ORDER.filter((method) => all.has(method));
}

/** The `Allow` header value of a resource with `methods`. */
export function allowHeader(methods: readonly string[]): string {
  return allowedMethods(methods).join(', ');
}

/**
 * What a CORS preflight permits (Access-Control-Allow-Methods), on every resource: every method
 * the API answers, so a page can also read the 405 of a method a resource lacks. The resource's
 * own methods are in `Allow`.
 */
export const CORS_ALLOWED_METHODS = ALLOW_ORDER.join(',');

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // malformed escapes reach the handler as-is and fail its validation
  }
}
