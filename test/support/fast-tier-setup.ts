// The fast tier's global setup (jest.config.js): no service, only the run's scratch directory.
import { openRunScratch } from './run-scratch.ts';

export default async function fastTierSetup(): Promise<void> {
  await openRunScratch();
}
