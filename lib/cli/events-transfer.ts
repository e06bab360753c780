// Export and import of events as JSON Lines, one event per line:
//   {"eventId":"…","name":"…","location":"…","eventDescription":"…","dates":["2031-05-02"],"price":25,"version":3}
// Both stream: export holds one Scan page, import one batch of lines, never the whole table.
// Import checks the whole file before writing anything: every line is read by the JSON text rules
// of a request body (functions/http/json-text.ts), validated with the schema the API uses
// (functions/events/event-schema.ts) and the store's own limits (the months of an event), and
// event ids must not repeat. The
// checked lines are spooled to a temporary file (stdin can be read once), then written through
// the events store, several at a time. A file with a bad line is refused with nothing written.
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import * as v from 'valibot';
import { SpecialEvent } from '../../functions/events/event-schema.ts';
import { HttpProblem } from '../../functions/events/problems.ts';
import { parseJsonObject } from '../../functions/http/json-text.ts';
import { importProblem, type EventArchive } from '../../functions/store/event-archive.ts';
import type { StoredEvent } from '../../functions/store/events-store.ts';

/**
 * The largest version an import accepts: one below Number.MAX_SAFE_INTEGER, so that the next
 * change's version (+1) is still an exact integer and two versions never compare equal.
 */
export const MAX_IMPORTED_VERSION = Number.MAX_SAFE_INTEGER - 1;

/** One line of an export: the event as the API shows it, plus its version (the ETag's source). */
export const ExportedEvent = v.strictObject({
  ...SpecialEvent.entries,
  version: v.pipe(
    v.number('must be a number'),
    v.check(
      (version) => Number.isSafeInteger(version) && version >= 1 && version <= MAX_IMPORTED_VERSION,
      `must be a whole number from 1 to ${MAX_IMPORTED_VERSION} (so that the next change's version is still exact)`,
    ),
  ),
});

/** Writes in flight at once during an import (each is a read and a transaction). */
export const IMPORT_CONCURRENCY = 16;

export type Progress = (message: string) => void;

export async function exportEvents(store: EventArchive, output: Writable, progress: Progress): Promise<number> {
  let count = 0;
  for await (const { event, version } of store.allEvents()) {
    const line = `${JSON.stringify({ ...event, version })}\n`;
    // Respect back-pressure: a slow pipe must not make the export buffer the table.
    if (!output.write(line)) await once(output, 'drain');
    count += 1;
    if (count % 500 === 0) progress(`exported ${count} events`);
  }
  return count;
}

export class InvalidImportError extends Error {
  override name = 'InvalidImportError';
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`The file was refused and nothing was written:\n${problems.join('\n')}`);
    this.problems = problems;
  }
}

/** At most this many problems are reported (a wrong file would otherwise print every line). */
const MAX_PROBLEMS = 20;

export interface ImportSummary {
  created: number;
  unchanged: number;
  replaced: number;
}

export async function importEvents(store: EventArchive, input: Readable, progress: Progress): Promise<ImportSummary> {
  const directory = await mkdtemp(join(tmpdir(), 'museum-import-'));
  try {
    const spool = join(directory, 'checked.jsonl');
    const total = await checkAll(input, spool, progress);
    return await writeAll(store, spool, total, progress);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Pass one: every line valid, no id twice; the normalised events go to `spool`. */
async function checkAll(input: Readable, spool: string, progress: Progress): Promise<number> {
  const out = createWriteStream(spool);
  const firstLineOf = new Map<string, number>();
  const problems: string[] = [];
  let lineNumber = 0;
  let events = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    const problem = checkLine(line, lineNumber, firstLineOf);
    if (typeof problem === 'string') {
      if (problems.length < MAX_PROBLEMS) problems.push(problem);
      continue;
    }
    events += 1;
    if (problems.length === 0 && !out.write(`${JSON.stringify(problem)}\n`)) await once(out, 'drain');
    if (lineNumber % 1000 === 0) progress(`checked ${lineNumber} lines`);
  }
  out.end();
  await once(out, 'close');
  if (problems.length > 0) throw new InvalidImportError(problems);
  return events;
}

function checkLine(line: string, lineNumber: number, firstLineOf: Map<string, number>): string | v.InferOutput<typeof ExportedEvent> {
  let json: unknown;
  try {
    // The text rules of every request body (functions/http/json-text.ts): no duplicate key, and a
    // number no double holds exactly (1e-400, 10.000000000000000001) kept as its text, for the schema to refuse.
    json = parseJsonObject(line, `Line ${lineNumber}`);
  } catch (error) {
    if (error instanceof HttpProblem) return `${error.problem.detail}.`;
    throw error;
  }
  const result = v.safeParse(ExportedEvent, json);
  if (!result.success) return `Line ${lineNumber}: ${issueSentences(result.issues)}.`;
  // What the store itself would refuse when writing it (the month limit): refused here, before anything is written.
  const refused = importProblem(result.output);
  if (refused) return `Line ${lineNumber}: ${refused}.`;
  const earlier = firstLineOf.get(result.output.eventId);
  if (earlier !== undefined) return `Line ${lineNumber} repeats event ${result.output.eventId}, already on line ${earlier}.`;
  firstLineOf.set(result.output.eventId, lineNumber);
  return result.output;
}

const FIELDS = Object.keys(ExportedEvent.entries);

/**
 * A line's problems as one sentence: each field once (its first problem), named as in the file
 * (`dates[1]`), in the schema's own words ("must not be negative"), not valibot's "Invalid key".
 */
export function issueSentences(issues: readonly v.BaseIssue<unknown>[]): string {
  const byField = new Map<string, string>();
  for (const issue of issues) {
    const path = issue.path ?? [];
    const field = path
      .map((item, index) => (typeof item.key === 'number' ? `[${item.key}]` : `${index > 0 ? '.' : ''}${String(item.key)}`))
      .join('');
    if (byField.has(field)) continue;
    let sentence: string;
    if (path.length === 0) sentence = `the line must be one JSON object with the fields ${FIELDS.join(', ')}`;
    else if (issue.type === 'strict_object' && issue.expected === 'never')
      sentence = `${field} is not a field of an event (the fields are ${FIELDS.join(', ')})`;
    else if (issue.type === 'strict_object' && issue.received === 'undefined') sentence = `${field} is missing`;
    else sentence = `${field} ${issue.message}`;
    byField.set(field, sentence);
  }
  return [...byField.values()].join('; ');
}

/** Pass two: through the store, IMPORT_CONCURRENCY at a time. */
async function writeAll(store: EventArchive, spool: string, total: number, progress: Progress): Promise<ImportSummary> {
  const summary: ImportSummary = { created: 0, unchanged: 0, replaced: 0 };
  const inFlight = new Set<Promise<void>>();
  let done = 0;
  let failure: unknown;
  for await (const line of createInterface({ input: createReadStream(spool), crlfDelay: Infinity })) {
    if (failure) break;
    const { version, ...event } = JSON.parse(line) as v.InferOutput<typeof ExportedEvent>;
    const stored: StoredEvent = { event, version };
    const write: Promise<void> = store
      .importEvent(stored)
      .then((outcome) => {
        summary[outcome] += 1;
        done += 1;
        if (done % 100 === 0) progress(`imported ${done} of ${total} events`);
      })
      .catch((error: unknown) => {
        failure ??= error;
      })
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
    if (inFlight.size >= IMPORT_CONCURRENCY) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure) {
    // Every line was valid, so this is the target failing (throttling, credentials, network).
    // Importing the same file again is safe: what was written is left unchanged.
    throw new Error(
      `Import stopped after ${done} of ${total} events: ${(failure as Error).message}. Run the same import again to finish it.`,
    );
  }
  return summary;
}
