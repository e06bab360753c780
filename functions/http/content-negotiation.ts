// Proactive content negotiation (RFC 9110 §12.1, §12.5.1): the representation of a read chosen from
// the request's Accept. No Accept, `*/*` or a tie: the first representation offered (JSON). Nothing
// acceptable: a 406 problem that lists what is offered. Both answers and the 406 carry
// `Vary: Accept` (§12.5.5), so a cache keeps one copy per representation. API Gateway passes Accept
// to a Lambda proxy integration unchanged, in `headers` (last line) and `multiValueHeaders` (every
// line): https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#apigateway-multivalue-headers-and-parameters
import { HttpProblem } from '../events/problems.ts';
import { fieldLines } from './request-headers.ts';
import type { HttpEvent } from './http.ts';

/** A representation a read offers: its media type and the parameters a client may ask for. */
export interface Offer {
  type: string;
  /** Parameters the representation has (lower-case names); an Accept range asking another value does not match. */
  parameters?: Record<string, string>;
}

export const JSON_OFFER: Offer = { type: 'application/json', parameters: { charset: 'utf-8' } };
/** JSON-LD in compacted form (https://www.w3.org/TR/json-ld11/#iana-considerations, the `profile` parameter). */
export const JSON_LD_OFFER: Offer = {
  type: 'application/ld+json',
  parameters: { charset: 'utf-8', profile: 'http://www.w3.org/ns/json-ld#compacted' },
};
export const JSON_LD_CONTENT_TYPE = JSON_LD_OFFER.type;

const JSON_ONLY: readonly Offer[] = [JSON_OFFER];
const JSON_OR_JSON_LD: readonly Offer[] = [JSON_OFFER, JSON_LD_OFFER];

/**
 * What an event read (one event, a page of the list) offers, preferred first: JSON, the answer to
 * no Accept, to any type or to a tie; and JSON-LD only where the deployment names its museum.
 */
export function eventReadOffers(museumNamed: boolean): readonly Offer[] {
  return museumNamed ? JSON_OR_JSON_LD : JSON_ONLY;
}

/** What every negotiated answer says about its selection (RFC 9110 §12.5.5). */
export const VARY_ACCEPT = { Vary: 'Accept' };

/** One member of Accept: `type/subtype` (either may be `*`), its parameters and its weight. */
interface MediaRange {
  type: string;
  subtype: string;
  parameters: Map<string, string>;
  q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * The members of Accept field lines (RFC 9110 §12.5.1, §5.6.6 for parameters). A member outside the
 * grammar is ignored, as §12.5.1 allows a server to ignore what it cannot parse; a `q` outside
 * 0..1 (or with more than three decimals) makes its member unacceptable (q=0).
 */
export function parseAccept(lines: readonly string[]): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const member of splitOutsideQuotes(lines.join(','), ',')) {
    const [mediaRange = '', ...rawParameters] = splitOutsideQuotes(member, ';').map((part) => part.trim());
    const [type = '', subtype = '', ...rest] = mediaRange.toLowerCase().split('/');
    if (rest.length > 0 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) continue;
    const parameters = new Map<string, string>();
    let q = 1;
    for (const parameter of rawParameters) {
      if (parameter === '') continue;
      const equals = parameter.indexOf('=');
      const name = (equals < 0 ? parameter : parameter.slice(0, equals)).trim().toLowerCase();
      const value = equals < 0 ? '' : unquote(parameter.slice(equals + 1).trim());
      // `q` ends the media type's parameters; what follows are accept extensions, which no one defines.
      if (name === 'q') {
        q = /^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
        break;
      }
      parameters.set(name, value);
    }
    ranges.push({ type, subtype, parameters, q });
  }
  return ranges;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (quoted && char === '\\') {
      current += char + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

function unquote(value: string): string {
  return value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
}

/** How a parameter asked for matches the offer's: charset case-insensitively, JSON-LD's `profile` as a list of IRIs of which one is the offer's. */
const PARAMETER_MATCHES: Record<string, (asked: string, offered: string) => boolean> = {
  charset: (asked, offered) => asked.toLowerCase() === offered,
  profile: (asked, offered) => asked.split(/\s+/).includes(offered),
};

/** Whether a range's parameters all hold for the offer (one it does not have never does). */
function parametersMatch(range: MediaRange, offer: Offer): boolean {
  for (const [name, asked] of range.parameters) {
    const offered = offer.parameters?.[name];
    const matches = PARAMETER_MATCHES[name] ?? ((a: string, b: string) => a === b);
    if (offered === undefined || !matches(asked, offered)) return false;
  }
  return true;
}

/** How specific a matching range is (§12.5.1: the most specific reference wins), or -1 when it does not match. */
function specificity(range: MediaRange, offer: Offer): number {
  const [type, subtype] = offer.type.split('/') as [string, string];
  if (range.type === '*') return 0;
  if (range.type !== type) return -1;
  if (range.subtype === '*') return 1;
  if (range.subtype !== subtype || !parametersMatch(range, offer)) return -1;
  return 2 + range.parameters.size;
}

/** The weight Accept gives an offer: that of its most specific matching range, 0 when none matches. */
function weight(ranges: readonly MediaRange[], offer: Offer): number {
  let best: { specificity: number; q: number } | undefined;
  for (const range of ranges) {
    const level = specificity(range, offer);
    if (level >= 0 && (best === undefined || level > best.specificity)) best = { specificity: level, q: range.q };
  }
  return best?.q ?? 0;
}

/**
 * The offer a request's Accept prefers (highest weight above 0; the earlier offer on a tie), or
 * undefined when none is acceptable. No Accept field, or one without a member this parser reads,
 * accepts anything (§12.5.1).
 */
export function preferredOffer(acceptLines: readonly string[] | undefined, offers: readonly Offer[]): Offer | undefined {
  const ranges = parseAccept(acceptLines ?? []);
  if (ranges.length === 0) return offers[0];
  let chosen: Offer | undefined;
  let chosenWeight = 0;
  for (const offer of offers) {
    const q = weight(ranges, offer);
    if (q > chosenWeight) [chosen, chosenWeight] = [offer, q];
  }
  return chosen;
}

/** The representation to answer `event` with; a 406 problem naming `offers` when none is acceptable. */
export function negotiate(event: Pick<HttpEvent, 'headers' | 'multiValueHeaders'>, offers: readonly Offer[]): Offer {
  const chosen = preferredOffer(fieldLines(event, 'accept'), offers);
  if (chosen) return chosen;
  const types = offers.map((offer) => offer.type).join(', ');
  throw new HttpProblem('not-acceptable', `No representation matches Accept; this resource is offered as ${types}`, {
    headers: VARY_ACCEPT,
  });
}
