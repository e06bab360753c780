// A fixed-seed slice of the agreement between the served OpenAPI document and the server, see
// document-agreement.ts (`npm run fuzz` runs this suite with 500 requests per kind, see
// test/reliability/fuzz-settings.ts).
import { testEnvironment } from '../support/test-environment.ts';
import { recordFigures } from '../reliability/figures.ts';
import { fuzzCount, fuzzSeed, longFuzzRun } from '../reliability/fuzz-settings.ts';
import { runAgreement } from './document-agreement.ts';

const SLICE = { seed: fuzzSeed(20_261_123), runsPerKind: fuzzCount('MUSEUM_AGREEMENT_RUNS', 60) };
/** A bound of 1 s a request, four times what an idle machine needs: the slice asserts agreement, not speed. */
const TIMEOUT_MS = Math.max(240_000, SLICE.runsPerKind * 4 * 1000);

describe('the served OpenAPI document and the server', () => {
  test(
    `agree on ${SLICE.runsPerKind * 4} requests generated from the document's schemas (seed ${SLICE.seed}): schema-valid is 2xx, a 400 is schema-invalid`,
    async () => {
      const report = await runAgreement({ url: testEnvironment().url, ...SLICE });
      recordFigures('document-agreement', { ...report, disagreements: report.disagreements.length });
      if (longFuzzRun)
        console.log(
          `${report.requests} requests: ${report.accepted} accepted, ${report.rejected} rejected with 400, ${report.disagreements.length} disagreements`,
        );
      expect(report.disagreements).toEqual([]);
      expect(report.requests).toBe(SLICE.runsPerKind * 4);
      // Both directions were exercised.
      expect(report.accepted).toBeGreaterThan(SLICE.runsPerKind);
      expect(report.rejected).toBeGreaterThan(SLICE.runsPerKind / 2);
    },
    TIMEOUT_MS,
  );
});
