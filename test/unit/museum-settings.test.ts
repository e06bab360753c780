// The museum's settings as each place that reads them takes them: the CDK stage's context (all or
// none, refused at synthesis with the context key's name), the local run's environment (each
// MUSEUM_* variable by the same rule) and the functions' environment the stack and the run give.
import { readStageConfig } from '../../lib/cdk/stage-config.ts';
import { settingProblems } from '../../lib/local/local-settings.ts';
import { EXAMPLE_MUSEUM } from '../../lib/openapi/json-ld-document.ts';
import { MUSEUM_SETTINGS, museumEnvironment, museumSettingsFrom } from '../../functions/events/museum-settings.ts';

const context = (values: Record<string, unknown>) => ({ tryGetContext: (key: string) => values[key] });
const museumContext = Object.fromEntries(
  Object.entries(EXAMPLE_MUSEUM).map(([name, value]) => [MUSEUM_SETTINGS[name as keyof typeof EXAMPLE_MUSEUM].context, value]),
);

test('a stage names its museum with all seven context keys, or none (then no JSON-LD is offered)', () => {
  expect(readStageConfig(context({})).museum).toBeUndefined();
  expect(readStageConfig(context(museumContext)).museum).toEqual(EXAMPLE_MUSEUM);
  expect(() => readStageConfig(context({ museumName: 'Example Museum' }))).toThrow(/Context "museumPriceCurrency" is missing/);
  expect(() => readStageConfig(context({ ...museumContext, museumPriceCurrency: 'euro' }))).toThrow(
    /Context "museumPriceCurrency" must be an ISO 4217 currency code/,
  );
});

test('the functions get one MUSEUM_* variable per setting, and read back what they were given', () => {
  const environment = museumEnvironment(EXAMPLE_MUSEUM);
  expect(Object.keys(environment).sort()).toEqual(
    Object.values(MUSEUM_SETTINGS)
      .map((setting) => setting.variable)
      .sort(),
  );
  const readBack = museumSettingsFrom(
    Object.fromEntries(Object.entries(MUSEUM_SETTINGS).map(([name, setting]) => [name, environment[setting.variable]])),
    (name) => name,
  );
  expect(readBack).toEqual(EXAMPLE_MUSEUM);
  expect(museumEnvironment(undefined)).toEqual({});
});

test.each([
  ['priceCurrency', 'usd'],
  ['addressCountry', 'USA'],
  ['eventPageUrl', 'https://museum.example/events/'],
  ['eventPageUrl', 'ftp://museum.example/{eventId}'],
  ['name', 'Example\nMuseum'],
  ['postalCode', '12345;'],
] as const)('%s %j is refused', (name, value) => {
  expect(() => museumSettingsFrom({ ...EXAMPLE_MUSEUM, [name]: value }, (setting) => MUSEUM_SETTINGS[setting].variable)).toThrow(
    MUSEUM_SETTINGS[name].variable,
  );
});

test('the local run refuses a MUSEUM_* value the deployed stage would refuse, naming the variable', () => {
  expect(settingProblems({ MUSEUM_ADDRESS_COUNTRY: 'France' })).toEqual([
    'MUSEUM_ADDRESS_COUNTRY="France" is not accepted: use an ISO 3166-1 alpha-2 country code, like FR or US, or leave it unset.',
  ]);
  expect(settingProblems({ MUSEUM_EVENT_PAGE_URL: 'https://museum.example/events' })[0]).toMatch(/^MUSEUM_EVENT_PAGE_URL=.*\{eventId\}/);
  expect(settingProblems({ MUSEUM_NAME: 'Musée d’Orsay', MUSEUM_PRICE_CURRENCY: 'EUR' })).toEqual([]);
});
