// If-Match and If-None-Match by RFC 9110 §13.1.1 and §13.1.2: both `"*" / #entity-tag`, parsed
// by one function; If-Match compares strongly (§8.8.3.2: both tags strong and their opaque-tags
// equal character for character), If-None-Match weakly. Hand-written because it is a few lines
// of grammar that no maintained small library covers.

/** etagc = %x21 / %x23-7E / obs-text: any visible ASCII but `"`, and bytes 0x80-0xFF (Latin-1 in a header string). */
const ETAGC = '[\\x21\\x23-\\x7E\\x80-\\xFF]';
const ENTITY_TAG = `(W/)?"${ETAGC}*"`;
/**
 * The whole field value, as published in the OpenAPI document (the server parses with
 * `parseEntityTagList`, which accepts exactly the same language: a unit property checks both). A list
 * may hold empty elements (`"1",,"2"` and `` are valid lists, RFC 9110 §5.6.1.2). Written so that
 * every character has one way to match (spaces before a comma, then commas and spaces, then a
 * tag): the obvious `(E)?(OWS , OWS (E)?)*` backtracks exponentially on a run of `, , ,`.
 */
export const IF_MATCH_PATTERN = `^(\\*|[ \\t,]*(${ENTITY_TAG}([ \\t]*,[ \\t,]*${ENTITY_TAG})*)?[ \\t,]*)$`;
// Built on first use: a module-level `new RegExp` would keep this module in bundles that never parse If-Match.
let entityTag: RegExp | undefined;

/** Our ETags are `"<version>"`, the version a positive integer written without leading zeros. */
const VERSION_TAG = /^[1-9][0-9]{0,14}$/;

/** An entity-tag of a list: its opaque-tag (between the quotes) and whether it is weak (`W/`). */
export interface EntityTag {
  opaqueTag: string;
  weak: boolean;
}

export type EntityTagList =
  /** No field line. */
  | { kind: 'absent' }
  /** `*`: any current representation. */
  | { kind: 'any' }
  /** The entity-tags of the list, in order; empty list elements skipped (a list may be empty). */
  | { kind: 'tags'; tags: EntityTag[] }
  | { kind: 'invalid' };

/**
 * Parses `"*" / #entity-tag`, the field value of If-Match and If-None-Match; several field lines
 * form one comma-separated list (RFC 9110 §5.3). A linear scan, not one regular expression over
 * the whole value, so no value can make it backtrack: split at the commas outside quotes (an
 * opaque-tag may hold a comma), then match each element on its own.
 */
export function parseEntityTagList(fieldLines: readonly string[] | undefined): EntityTagList {
  if (fieldLines === undefined || fieldLines.length === 0) return { kind: 'absent' };
  const value = fieldLines.map(trimOws).join(', ');
  if (value === '*') return { kind: 'any' };
  entityTag ??= new RegExp(`^${ENTITY_TAG}$`);
  const tags: EntityTag[] = [];
  for (const element of listElements(value)) {
    if (element === '') continue; // empty list elements are allowed and ignored
    if (!entityTag.test(element)) return { kind: 'invalid' };
    const weak = element.startsWith('W/');
    tags.push({ opaqueTag: element.slice(weak ? 3 : 1, -1), weak });
  }
  return { kind: 'tags', tags };
}

export type IfMatch =
  /** No If-Match: the write is unconditional. */
  | { kind: 'absent' }
  /** `*`: the event must exist (which every write requires anyway). */
  | { kind: 'any' }
  /** The versions whose strong ETags the list names; empty when no member can match (a list of weak or foreign tags, or an empty list). */
  | { kind: 'versions'; versions: number[] }
  | { kind: 'invalid' };

/** Parses If-Match: its list, reduced to the versions of ours it names. */
export function parseIfMatch(fieldLines: readonly string[] | undefined): IfMatch {
  const list = parseEntityTagList(fieldLines);
  if (list.kind !== 'tags') return list;
  // A weak tag never matches in If-Match; an opaque-tag that is not a version we wrote cannot be equal to our ETag.
  const versions = list.tags.filter((tag) => !tag.weak && VERSION_TAG.test(tag.opaqueTag)).map((tag) => Number(tag.opaqueTag));
  return { kind: 'versions', versions: [...new Set(versions)] };
}

/** OWS is space and tab only (RFC 9110 §5.6.3), not everything String.prototype.trim removes. */
function trimOws(text: string): string {
  return text.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** The comma-separated elements of a list, commas inside double quotes kept; each trimmed of OWS. */
function listElements(value: string): string[] {
  const elements: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '"') quoted = !quoted;
    else if (value[i] === ',' && !quoted) {
      elements.push(trimOws(value.slice(start, i)));
      start = i + 1;
    }
  }
  elements.push(trimOws(value.slice(start)));
  return elements;
}

/** Matches no version we ever write: the store then answers 412 (or 404 when the event is gone, RFC 9110 §13.2.1). */
const NO_VERSION = -1;

/**
 * Runs a conditional write: `write(expectedVersion)` with the one version the If-Match list
 * allows. A list naming several of our versions is resolved against the current version (one
 * read); should the event change between that read and the write, the write answers 412.
 */
export async function withIfMatch<T>(
  ifMatch: Exclude<IfMatch, { kind: 'invalid' }>,
  currentVersion: () => Promise<number | undefined>,
  write: (expectedVersion: number | undefined) => Promise<T>,
): Promise<T> {
  if (ifMatch.kind !== 'versions') return write(undefined);
  const { versions } = ifMatch;
  if (versions.length > 1) {
    const current = await currentVersion();
    return write(current !== undefined && versions.includes(current) ? current : NO_VERSION);
  }
  return write(versions[0] ?? NO_VERSION);
}

/** If-None-Match: its list as it is, weak and strong tags alike (If-None-Match compares weakly, RFC 9110 §13.1.2). */
export type IfNoneMatch = EntityTagList;

/** Parses If-None-Match (`"*" / #entity-tag`, the grammar of If-Match); several field lines form one list. */
export function parseIfNoneMatch(fieldLines: readonly string[] | undefined): IfNoneMatch {
  return parseEntityTagList(fieldLines);
}

/**
 * Whether If-None-Match fails for a representation whose entity-tag is `etag` (RFC 9110 §13.1.2):
 * `*`, or a listed tag equal to it by the weak comparison (opaque-tags equal, W/ ignored).
 */
export function ifNoneMatchFails(condition: IfNoneMatch, etag: string): boolean {
  if (condition.kind === 'any') return true;
  if (condition.kind !== 'tags') return false;
  const opaque = etag.slice(etag.startsWith('W/') ? 3 : 1, -1);
  return condition.tags.some((tag) => tag.opaqueTag === opaque);
}
