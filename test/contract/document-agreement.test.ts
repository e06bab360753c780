// A fixed-seed slice of the agreement between the served OpenAPI document and the server (the
// long run is part of `npm run fuzz`): see document-agreement.ts.
import { testEnvironment } from '../support/test-environment.ts';
import { recordFigures } from '../reliability/figures.ts';
import { runAgreement } from './document-agreement.ts';

const SLICE = { seed: 20_261_123, runsPerKind: 60 };

describe('the served OpenAPI document and the server', () => {
  test(`agree on ${SLICE.runsPerKind * 4} requests generated from the document's schemas (seed ${SLICE.seed}): schema-valid is 2xx, a 400 is schema-invalid`, async () => {
    const report = await runAgreement({ url: testEnvironment().url, ...SLICE });
    recordFigures('document-agreement', { ...report, disagreements: report.disagreements.length });
    expect(report.disagreements).toEqual([]);
    expect(report.requests).toBe(SLICE.runsPerKind * 4);
    // Both directions were exercised.
    expect(report.accepted).toBeGreaterThan(SLICE.runsPerKind);
    expect(report.rejected).toBeGreaterThan(SLICE.runsPerKind / 2);
  });
});
