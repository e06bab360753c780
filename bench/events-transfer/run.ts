// `npm run bench:events [-- <count>]`: export and import of 50,000 events (default) through
// `npm run events`, against an in-memory DynamoDB Local of its own. Prints the wall time and the
// peak resident memory of each CLI process (GNU time's %M), to show both stream: memory must
// not grow with the number of events. Not part of `npm test` (it takes minutes).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import { ensureLocalTables } from '../../lib/local/local-tables.ts';

const count = Number(process.argv[2] ?? 50_000);
const TIME = '/usr/bin/time';

interface Measured {
  seconds: number;
  peakRssMb: number;
  stderr: string;
}

async function measure(args: string[], env: Record<string, string>, stdinFile?: string, stdoutFile?: string): Promise<Measured> {
  const timing = join(directory, `time-${randomUUID()}.txt`);
  const child = spawn(TIME, ['-f', '%e %M', '-o', timing, process.execPath, '--import', 'tsx', 'bin/events.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (stdinFile) createReadStream(stdinFile).pipe(child.stdin);
  else child.stdin.end();
  if (stdoutFile) child.stdout.pipe(createWriteStream(stdoutFile));
  else child.stdout.resume();
  const [code] = (await once(child, 'close')) as [number];
  if (code !== 0) throw new Error(`events ${args.join(' ')} exited with ${code}: ${stderr}`);
  const [seconds, kilobytes] = (await readFile(timing, 'utf8')).trim().split(/\s+/).slice(-2).map(Number);
  return { seconds: seconds ?? NaN, peakRssMb: Math.round((kilobytes ?? NaN) / 1024), stderr: stderr.trim() };
}

async function writeEvents(file: string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < count; i++) {
    const month = String(1 + (i % 12)).padStart(2, '0');
    const line = JSON.stringify({
      eventId: randomUUID(),
      name: `Event ${i}`,
      location: 'Main Hall',
      eventDescription: `Benchmark event ${i}: ${'a description of ordinary length. '.repeat(4)}`,
      dates: [`2035-${month}-${String(1 + (i % 28)).padStart(2, '0')}`, `2035-${month}-${String(1 + ((i + 7) % 28)).padStart(2, '0')}`],
      price: (i % 100) + 0.5,
      version: 1 + (i % 3),
    });
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
}

const directory = await mkdtemp(join(tmpdir(), 'museum-bench-events-'));
process.env.DDB_LOCAL_TELEMETRY = '0';
const dynamodb = await startDynamoDbLocal();
try {
  await ensureLocalTables(dynamodb.endpoint);
  const env = { DYNAMODB_ENDPOINT: dynamodb.endpoint };
  const source = join(directory, 'source.jsonl');
  const exported = join(directory, 'exported.jsonl');
  await writeEvents(source);
  console.log(`${count} events, ${Math.round((await stat(source)).size / 1024 / 1024)} MB of JSON Lines`);
  const imported = await measure(['import'], env, source);
  console.log(`import: ${imported.seconds} s, peak RSS ${imported.peakRssMb} MB (${imported.stderr})`);
  const reimported = await measure(['import'], env, source);
  console.log(`re-import: ${reimported.seconds} s, peak RSS ${reimported.peakRssMb} MB (${reimported.stderr})`);
  const exportedRun = await measure(['export'], env, undefined, exported);
  console.log(`export: ${exportedRun.seconds} s, peak RSS ${exportedRun.peakRssMb} MB (${exportedRun.stderr})`);
} finally {
  await dynamodb.stop();
  await rm(directory, { recursive: true, force: true });
}
