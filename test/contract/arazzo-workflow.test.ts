// The Arazzo life-cycle workflow, run by `redocly respect` against the local API: each step's
// success criteria plus Respect's own status, content-type and schema checks against openapi.json.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateYear } from '../support/api-client.ts';
import { TEST_USERS, testEnvironment } from '../support/test-environment.ts';
import { redocly } from './redocly-cli.ts';

interface RespectReport {
  files: Record<
    string,
    { executedWorkflows: { workflowId: string; executedSteps: { stepId: string; checks: { name: string; passed: boolean }[] }[] }[] }
  >;
}

test('the special-event life cycle runs against the local API: create, get, list, update, delete, then 404', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'museum-respect-'));
  try {
    const report = join(directory, 'respect.json');
    const { username, password } = TEST_USERS.editor;
    const result = await redocly([
      'respect',
      'openapi/special-events.arazzo.yaml',
      '--input',
      `username=${username},password=${password},eventDate=${privateYear()}-04-01`,
      '--server',
      `museumApi=${testEnvironment().url}`,
      '--json-output',
      report,
    ]);
    expect({ exitCode: result.exitCode, output: result.exitCode === 0 ? '' : result.stdout + result.stderr }).toEqual({
      exitCode: 0,
      output: '',
    });

    const { files } = JSON.parse(await readFile(report, 'utf8')) as RespectReport;
    const [workflow] = Object.values(files).flatMap((file) => file.executedWorkflows);
    expect(workflow?.workflowId).toBe('specialEventLifeCycle');
    expect(workflow?.executedSteps.map((step) => step.stepId)).toEqual([
      'createEvent',
      'getEvent',
      'listEvents',
      'updateEvent',
      'deleteEvent',
      'getDeletedEvent',
    ]);
    const checks = workflow?.executedSteps.flatMap((step) => step.checks.map((check) => ({ step: step.stepId, ...check }))) ?? [];
    expect(checks.filter((check) => !check.passed)).toEqual([]);
    expect(checks.filter((check) => check.name === 'schema check').length).toBe(5);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
