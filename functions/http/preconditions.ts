// If-Match and If-None-Match by RFC 9110 §13.1.1 and §13.1.2: both `"*" / #entity-tag`, parsed
// by one function; If-Match compares strongly (§8.8.3.2: both tags strong and their opaque-tags
// equal character for character), If-None-Match weakly. Evaluated in the order of §13.2.2 on every
// method: If-Match first (false: 412), then If-None-Match (false: 304 for GET and HEAD, 412 for the
// others). A value outside the grammar is a 400 on every method. Hand-written because it is a few
// lines of grammar that no maintained small library covers.
import { HttpProblem } from '../events/problems.ts';

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

/**
 * Our ETags are `"<version>"`, the version a positive safe integer written without leading zeros.
 * A longer tag is never one of ours: read as a float, "9007199254740993" would be 9007199254740992
 * and match a tag it is not equal to.
 */
const VERSION_TAG = /^[1-9][0-9]{0,15}$/;

/** The version an opaque-tag names, or undefined when it is not exactly the text of a version we write. */
export function versionOfTag(opaqueTag: string): number | undefined {
  if (!VERSION_TAG.test(opaqueTag)) return undefined;
  const version = Number(opaqueTag);
  return Number.isSafeInteger(version) ? version : undefined;
}

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
  | { kind: 'versions'; versions: number[] };

/** An If-Match list reduced to the versions of ours it names. */
export function versionsOf(list: Exclude<EntityTagList, { kind: 'invalid' }>): IfMatch {
  if (list.kind !== 'tags') return list;
  // A weak tag never matches in If-Match; an opaque-tag that is not a version we wrote cannot be equal to our ETag.
  const versions = list.tags.flatMap((tag) => {
    const version = tag.weak ? undefined : versionOfTag(tag.opaqueTag);
    return version === undefined ? [] : [version];
  });
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

/** If-None-Match: its list as it is, weak and strong tags alike (If-None-Match compares weakly, RFC 9110 §13.1.2). */
export type IfNoneMatch = EntityTagList;

const opaqueOf = (etag: string) => etag.slice(etag.startsWith('W/') ? 3 : 1, -1);

/**
 * Whether If-None-Match fails for a representation whose entity-tag is `etag` (RFC 9110 §13.1.2):
 * `*`, or a listed tag equal to it by the weak comparison (opaque-tags equal as text, W/ ignored).
 */
export function ifNoneMatchFails(condition: IfNoneMatch, etag: string): boolean {
  if (condition.kind === 'any') return true;
  if (condition.kind !== 'tags') return false;
  const opaque = opaqueOf(etag);
  return condition.tags.some((tag) => tag.opaqueTag === opaque);
}

/**
 * Whether If-Match fails for a current representation whose entity-tag is `etag` (RFC 9110
 * §13.1.1): `*` holds (there is one); a list holds when a strong tag of it equals a strong `etag`
 * character for character.
 */
export function ifMatchFails(condition: EntityTagList, etag: string): boolean {
  if (condition.kind !== 'tags') return false;
  if (etag.startsWith('W/')) return true;
  const opaque = opaqueOf(etag);
  return !condition.tags.some((tag) => !tag.weak && tag.opaqueTag === opaque);
}

/** The two precondition headers of a request as lists (neither invalid: that is a 400 before anything runs). */
export interface ConditionalHeaders {
  ifMatch: Exclude<EntityTagList, { kind: 'invalid' }>;
  ifNoneMatch: Exclude<IfNoneMatch, { kind: 'invalid' }>;
}

/** The preconditions of a write: If-Match reduced to the versions it names. */
export interface Preconditions {
  ifMatch: IfMatch;
  ifNoneMatch: Exclude<IfNoneMatch, { kind: 'invalid' }>;
}

/** What the preconditions of a GET or HEAD make of a 200 whose entity-tag is `etag` (RFC 9110 §13.2.2, steps 1 and 3). */
export function readOutcome(conditions: ConditionalHeaders, etag: string): 'proceed' | 'precondition-failed' | 'not-modified' {
  if (ifMatchFails(conditions.ifMatch, etag)) return 'precondition-failed';
  return ifNoneMatchFails(conditions.ifNoneMatch, etag) ? 'not-modified' : 'proceed';
}

/** Matches no version we ever write: the store then answers 412 (or 404 when the event is gone, RFC 9110 §13.2.1). */
const NO_VERSION = -1;

/** The 412 of an If-None-Match that the current version of the event fails. */
export class IfNoneMatchFailedError extends HttpProblem {
  override name = 'IfNoneMatchFailedError';
  constructor() {
    super('precondition-failed', 'If-None-Match is * or names the current version of the event; nothing was written');
  }
}

/** The 412 of a GET or HEAD whose If-Match names no current entity-tag; the ETag header says which is. */
export class ReadPreconditionFailedError extends HttpProblem {
  override name = 'ReadPreconditionFailedError';
  constructor(etag: string) {
    super('precondition-failed', `If-Match names no current entity-tag of this resource; its current one is ${etag}`, {
      headers: { ETag: etag },
    });
  }
}

/**
 * The 412 of a POST with a precondition that the collection fails. A POST's target is the
 * collection, which always has a current representation: `*` holds for If-Match and fails
 * If-None-Match. Its entity-tag depends on the query and the day (a list page's content hash), so
 * no tag a client lists can be confirmed as current either.
 */
export class CollectionPreconditionFailedError extends HttpProblem {
  override name = 'CollectionPreconditionFailedError';
  constructor(header: 'If-Match' | 'If-None-Match') {
    const why =
      header === 'If-Match'
        ? 'names entity-tags, which the collection of events never matches'
        : 'is *, and the collection of events exists';
    super('precondition-failed', `${header} ${why}; nothing was created`);
  }
}

/** Evaluates the preconditions of a POST to the collection (see CollectionPreconditionFailedError). */
export function checkCollectionPreconditions({ ifMatch, ifNoneMatch }: ConditionalHeaders): void {
  if (ifMatch.kind === 'tags') throw new CollectionPreconditionFailedError('If-Match');
  if (ifNoneMatch.kind === 'any') throw new CollectionPreconditionFailedError('If-None-Match');
}

/** The preconditions as an idempotent request's fingerprint holds them (If-None-Match only when sent, so earlier fingerprints stay valid). */
export function preconditionsFingerprint({ ifMatch, ifNoneMatch }: Preconditions): Record<string, unknown> {
  return ifNoneMatch.kind === 'absent' ? { ifMatch } : { ifMatch, ifNoneMatch };
}

/**
 * Runs a conditional write by RFC 9110 §13.2.2: `write(expectedVersion)` with the one version the
 * preconditions allow, `undefined` when they allow any. If-Match comes first; then If-None-Match,
 * which fails when it is `*` (the event exists) or lists the current version's tag (weakly). A list
 * of versions or an If-None-Match is judged against the current version (one read), and the write
 * is then conditioned on that version: should the event change in between, the write answers 412
 * (404 when the event is gone, which a write without preconditions would answer too, §13.2.1).
 * A failed condition still goes to the store, with a version that never matches: a repeat of an
 * idempotent request gets its first answer, anything else the store's 412 (or 404).
 */
export async function withPreconditions<T>(
  conditions: Preconditions,
  currentVersion: () => Promise<number | undefined>,
  write: (expectedVersion: number | undefined) => Promise<T>,
): Promise<T> {
  const { ifMatch, ifNoneMatch } = conditions;
  if (ifNoneMatch.kind === 'absent') {
    if (ifMatch.kind !== 'versions') return write(undefined);
    if (ifMatch.versions.length <= 1) return write(ifMatch.versions[0] ?? NO_VERSION);
  }
  const current = await currentVersion();
  if (current === undefined) return write(NO_VERSION); // gone: the store answers 404
  if (ifMatch.kind === 'versions' && !ifMatch.versions.includes(current)) return write(NO_VERSION);
  if (!ifNoneMatchFails(ifNoneMatch, `"${current}"`)) return write(current);
  try {
    return await write(NO_VERSION);
  } catch (error) {
    throw error instanceof HttpProblem && error.problem.status === 412 ? new IfNoneMatchFailedError() : error;
  }
}
