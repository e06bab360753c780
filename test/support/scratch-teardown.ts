// The fast tier's global teardown (jest.config.js).
import { removeRunScratch } from './run-scratch.ts';

export default async function scratchTeardown(): Promise<void> {
  await removeRunScratch();
}
