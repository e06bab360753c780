// The property tests' parameters (test/reliability/property-runs.ts): a run that cannot try every
// case it claims in its time fails; it never passes having tried fewer.
import fc from 'fast-check';
import { propertyRuns } from '../reliability/property-runs.ts';

test('a property interrupted by its time limit fails instead of passing with fewer cases', async () => {
  let tried = 0;
  const slow = fc.asyncProperty(fc.integer(), async () => {
    tried++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
  await expect(fc.assert(slow, propertyRuns(1_000, 200))).rejects.toThrow(/interrupted/i);
  expect(tried).toBeLessThan(1_000);
});

test('a property with time to spare runs every claimed case', async () => {
  let tried = 0;
  await fc.assert(
    fc.asyncProperty(fc.integer(), async () => {
      tried++;
    }),
    propertyRuns(50, 60_000),
  );
  expect(tried).toBe(50);
});
