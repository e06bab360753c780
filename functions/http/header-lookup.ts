// Header field names are case-insensitive (RFC 9110 §5.1) and API Gateway hands them on as the
// client or the integration spelled them: every lookup by name goes through here.

/** The key under which `headers` holds the field `name`, whatever its case. */
export function headerKey(headers: Readonly<Record<string, unknown>> | null | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  return Object.keys(headers ?? {}).find((key) => key.toLowerCase() === wanted);
}

/** The value of the field `name` in `headers`, whatever the case of its key. */
export function headerValue<V>(headers: Readonly<Record<string, V>> | null | undefined, name: string): V | undefined {
  const key = headerKey(headers, name);
  return key === undefined ? undefined : headers?.[key];
}

/**
 * The values of every line of the field `name`, in order, from a raw header list (names and values
 * alternating, as Node's `rawHeaders`): the local gateway reads fields API Gateway reads per line.
 */
export function headerLines(rawHeaders: readonly string[], name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() === wanted) values.push(rawHeaders[i + 1] as string);
  }
  return values;
}

/** `headers` without the fields `names`, whatever the case of their keys. */
export function withoutHeaders<V>(headers: Readonly<Record<string, V>>, names: readonly string[]): Record<string, V> {
  const drop = new Set(names.map((name) => name.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !drop.has(name.toLowerCase())));
}
