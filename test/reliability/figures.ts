// The reliability tests' figures (requests tried, outcomes, faults injected). With
// RELIABILITY_FIGURES=<file> each test appends one JSON line to that file; docs/RELIABILITY.md
// quotes the last run. Without it nothing is written.
import { appendFileSync } from 'node:fs';

export function recordFigures(name: string, figures: Record<string, unknown>): void {
  const file = process.env.RELIABILITY_FIGURES;
  if (file) appendFileSync(file, `${JSON.stringify({ name, at: new Date().toISOString(), ...figures })}\n`);
}
