// CORS for the answers API Gateway makes itself from MOCK integrations (documents, 405, OPTIONS):
// mapping-template lines that echo the request's Origin only when it is one of the allowed ones,
// as http-cors does in the handlers. A template can choose per request (`$context.responseOverride`),
// unlike a static header mapping or a gateway response (lib/cdk/problem-gateway-responses.ts).
import { CORS_EXPOSED_HEADERS } from '../../functions/routes.ts';

/** Velocity lines setting the CORS headers (and `extra` ones) for an allowed Origin; none without origins. */
export function corsTemplateLines(corsOrigins: readonly string[], extra: Record<string, string> = {}): string[] {
  if (corsOrigins.length === 0) return [];
  for (const value of [...corsOrigins, ...Object.values(extra)]) {
    if (/['$#\\]/.test(value)) throw new Error(`${value} cannot be written in a mapping template`);
  }
  const set = (name: string, value: string) => `#set($context.responseOverride.header.${name} = ${value})`;
  return [
    `#set($origin = $input.params().header.get('Origin'))`,
    `#if("$!origin" == "")#set($origin = $input.params().header.get('origin'))#end`,
    // Every answer varies by Origin when CORS is on, whether this request sent one or not.
    set('Vary', "'Origin'"),
    `#if(${corsOrigins.map((origin) => `"$!origin" == '${origin}'`).join(' || ')})`,
    set('Access-Control-Allow-Origin', '$origin'),
    set('Access-Control-Expose-Headers', `'${CORS_EXPOSED_HEADERS}'`),
    ...Object.entries(extra).map(([name, value]) => set(name, `'${value}'`)),
    '#end',
  ];
}
