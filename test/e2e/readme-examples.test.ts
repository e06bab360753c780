// The README's curl examples, run as written against a fresh `npm start` (in memory) and compared
// with the output the README shows, byte for byte: the examples cannot drift from the server.
// Only the event id and the Date header's value are placeholders (`<eventId>`, `<date>`).
import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { killAllRuns, startLocalRun, untilListening } from '../support/local-run.ts';

jest.setTimeout(300_000);

const run = promisify(execFile);
const PASSWORD = 'readme-admin-password-1';

interface Example {
  command: string;
  expected: string;
}

/** The console block that starts with `$ B=...`: each `$ curl` command (with its continuation lines) and the output shown after it. */
async function readmeExamples(): Promise<Example[]> {
  const readme = await readFile('README.md', 'utf8');
  const block = /```console\n(\$ B=[\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no ```console block of examples starting with $ B=');
  const examples: Example[] = [];
  const lines = block.replace(/\n$/, '').split('\n');
  for (let i = 0; i < lines.length;) {
    const line = lines[i] as string;
    if (!line.startsWith('$ ')) throw new Error(`Output without a command in the README: ${line}`);
    let command = line.slice(2);
    while (command.endsWith('\\')) command += `\n${lines[++i]}`;
    i++;
    const output: string[] = [];
    while (i < lines.length && !(lines[i] as string).startsWith('$ ')) output.push(lines[i++] as string);
    if (command.startsWith('#') || command.startsWith('B=')) {
      expect(output).toEqual([]);
      continue;
    }
    examples.push({ command, expected: output.join('\n') });
  }
  return examples;
}

afterEach(() => killAllRuns());

test("the README's examples answer exactly what the README shows", async () => {
  const examples = await readmeExamples();
  expect(examples.length).toBeGreaterThanOrEqual(6);
  expect(examples.some((example) => /curl -i .*-X POST/.test(example.command))).toBe(true);

  const data = join(await mkdtemp(join(tmpdir(), 'museum-readme-')), 'data');
  const local = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_IN_MEMORY: '1', MUSEUM_ADMIN_PASSWORD: PASSWORD });
  try {
    const url = await untilListening(local);
    let eventId = '<eventId>';
    for (const { command, expected } of examples) {
      const { stdout } = await run('sh', ['-c', command.replaceAll('<eventId>', eventId)], {
        env: { ...process.env, B: url, A: `admin:${PASSWORD}` },
      });
      eventId = /^Location: \/v1\.1\/special-events\/(\S+)\r?$/m.exec(stdout)?.[1] ?? eventId;
      const shown = stdout
        .replace(/\r\n/g, '\n')
        .replace(/\n$/, '')
        .replaceAll(eventId, '<eventId>')
        .replace(/^Date: .*$/gm, 'Date: <date>');
      expect({ command, output: shown }).toEqual({ command, output: expected });
    }
    expect(eventId).toMatch(/^[0-9a-f-]{36}$/);
  } finally {
    // A clean stop (killAllRuns, afterwards, is the fallback).
    if (local.child.exitCode === null) process.kill(local.child.pid as number, 'SIGTERM');
    // The wait's timer is unref'd: a pending 60 s timer would keep this jest worker from exiting.
    await Promise.race([local.exited, sleep(60_000, undefined, { ref: false })]);
  }
});
