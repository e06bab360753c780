// Who hosts the events, as the JSON-LD representation names it (functions/events/json-ld.ts): the
// museum's name and postal address, the currency of its prices and its web page for each event.
// Deployment settings: the CDK stage's context (lib/cdk/stage-config.ts) and the local run's
// environment (lib/local/local-settings.ts) check them with the rules below and hand them to the
// functions as the environment variables named here. A deployment that names no museum offers no
// JSON-LD: what a search engine would index must not be a placeholder.

export interface MuseumSettings {
  /** The museum's name: the event's `location` and `organizer`. */
  name: string;
  streetAddress: string;
  addressLocality: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2 country code, as Google's event guidance writes `addressCountry`. */
  addressCountry: string;
  /** ISO 4217 currency code of every event's `price`. */
  priceCurrency: string;
  /** The museum's web page of an event, with `{eventId}` where its id goes: the event's `url`, `@id` and offer URL. */
  eventPageUrl: string;
}

/** Each setting: its environment variable, its CDK context key, its rule and how to say it in a refusal. */
export const MUSEUM_SETTINGS = {
  name: { variable: 'MUSEUM_NAME', context: 'museumName', pattern: /^\S.{0,199}$/u, accepted: 'the museum name, 1 to 200 characters' },
  streetAddress: {
    variable: 'MUSEUM_STREET_ADDRESS',
    context: 'museumStreetAddress',
    pattern: /^\S.{0,199}$/u,
    accepted: 'a street address, 1 to 200 characters',
  },
  addressLocality: {
    variable: 'MUSEUM_ADDRESS_LOCALITY',
    context: 'museumAddressLocality',
    pattern: /^\S.{0,99}$/u,
    accepted: 'a town or city, 1 to 100 characters',
  },
  postalCode: {
    variable: 'MUSEUM_POSTAL_CODE',
    context: 'museumPostalCode',
    pattern: /^[A-Za-z0-9][A-Za-z0-9 -]{0,15}$/,
    accepted: 'a postal code: letters, digits, spaces and hyphens, at most 16',
  },
  addressCountry: {
    variable: 'MUSEUM_ADDRESS_COUNTRY',
    context: 'museumAddressCountry',
    pattern: /^[A-Z]{2}$/,
    accepted: 'an ISO 3166-1 alpha-2 country code, like FR or US',
  },
  priceCurrency: {
    variable: 'MUSEUM_PRICE_CURRENCY',
    context: 'museumPriceCurrency',
    pattern: /^[A-Z]{3}$/,
    accepted: 'an ISO 4217 currency code, like EUR or USD',
  },
  eventPageUrl: {
    variable: 'MUSEUM_EVENT_PAGE_URL',
    context: 'museumEventPageUrl',
    pattern: /^https?:\/\/[^/\s{}?#]+(\/[^\s{}#]*)?\{eventId\}[^\s{}#]*$/,
    accepted: 'an http(s) URL with {eventId} once, like https://museum.example/events/{eventId}',
  },
} as const satisfies Record<keyof MuseumSettings, { variable: string; context: string; pattern: RegExp; accepted: string }>;

export type MuseumSettingName = keyof MuseumSettings;
export const MUSEUM_SETTING_NAMES = Object.keys(MUSEUM_SETTINGS) as MuseumSettingName[];

/**
 * The settings from `values` (by setting name): all of them, none (undefined), or an error that
 * names each missing or refused one. Control characters are refused by the patterns' `.` only in
 * part, so they are checked here too.
 */
export function museumSettingsFrom(values: Partial<Record<MuseumSettingName, string>>, describe: (name: MuseumSettingName) => string) {
  const given = MUSEUM_SETTING_NAMES.filter((name) => values[name] !== undefined && values[name] !== '');
  if (given.length === 0) return undefined;
  const problems = MUSEUM_SETTING_NAMES.flatMap((name) => {
    const value = values[name];
    if (value === undefined || value === '')
      return [`${describe(name)} is missing (the museum's settings are given all together or not at all)`];
    // eslint-disable-next-line no-control-regex -- control characters are what is refused
    if (!MUSEUM_SETTINGS[name].pattern.test(value) || /[\u0000-\u001f\u007f]/.test(value))
      return [`${describe(name)} must be ${MUSEUM_SETTINGS[name].accepted}`];
    return [];
  });
  if (problems.length > 0) throw new Error(problems.join('; '));
  return values as MuseumSettings;
}

/** The functions' environment variables for `settings` (none without a museum): the stack and the local run give them alike. */
export function museumEnvironment(settings: MuseumSettings | undefined): Record<string, string> {
  if (!settings) return {};
  return Object.fromEntries(MUSEUM_SETTING_NAMES.map((name) => [MUSEUM_SETTINGS[name].variable, settings[name]]));
}
