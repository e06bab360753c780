// `redocly lint` (recommended-strict, see redocly.yaml) must find nothing in the contract files.
import { redocly } from './redocly-cli.ts';

test.each(['openapi/openapi.json', 'openapi/special-events.arazzo.yaml'])('redocly lint finds no problem in %s', async (file) => {
  const result = await redocly(['lint', file, '--format', 'json']);
  const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
  expect(report.problems).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  expect(result.exitCode).toBe(0);
});
