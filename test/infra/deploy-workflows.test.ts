// The GitHub Actions workflows cannot run here: check that they parse, that they are wired as
// docs/DEPLOY.md says (OIDC role from a repository variable, previews per pull request destroyed on
// close, production behind an environment approval), and that every command they run is written
// in docs/DEPLOY.md exactly, as is every cdk command the README shows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, string>;
}
interface Job {
  if?: string;
  needs?: string | string[];
  environment?: string | { name: string };
  permissions?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: Record<string, { types?: string[]; branches?: string[] }>;
  jobs: Record<string, Job>;
}

const workflowFiles = readdirSync(new URL('.github/workflows/', root)).filter((file) => /\.ya?ml$/.test(file));
const workflows: Record<string, Workflow> = Object.fromEntries(
  workflowFiles.map((file) => {
    const document = parseDocument(read(`.github/workflows/${file}`));
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((e) => e.message).join('; ')}`);
    return [file, document.toJS() as Workflow];
  }),
);

/** Shell commands of every `run:` step that installs, tests or calls the CDK CLI. */
function deployCommands(workflow: Workflow): string[] {
  return Object.values(workflow.jobs)
    .flatMap((job) => job.steps)
    .flatMap((step) => (step.run ?? '').split('\n'))
    .map((line) => line.trim())
    .filter((line) => /^(npx cdk|npm |CI=true )/.test(line));
}

/** Lines of the fenced shell blocks of a Markdown file. */
function shellLines(markdown: string): string[] {
  return [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].flatMap((match) => (match[1] ?? '').split('\n').map((line) => line.trim()));
}

const deployGuide = shellLines(read('docs/DEPLOY.md'));

test('every workflow file parses as YAML', () => {
  expect(workflowFiles.sort()).toEqual(['preview.yml', 'production.yml']);
});

test('a pull request is tested, then deployed as stage pr-<number> through the OIDC role, and its URL commented', () => {
  const preview = workflows['preview.yml']!;
  expect(preview.on.pull_request?.types).toEqual(expect.arrayContaining(['opened', 'synchronize', 'reopened', 'closed']));
  const deploy = preview.jobs.deploy!;
  expect(deploy.needs).toBe('test');
  expect(deploy.permissions).toMatchObject({ 'id-token': 'write', 'pull-requests': 'write' });
  const credentials = deploy.steps.find((step) => step.uses?.startsWith('aws-actions/configure-aws-credentials@'));
  expect(credentials?.with?.['role-to-assume']).toBe('${{ vars.AWS_DEPLOY_ROLE_ARN }}');
  const commands = deploy.steps.map((step) => step.run ?? '').join('\n');
  expect(commands).toContain('npx cdk deploy --all -c stage=pr-$PR_NUMBER');
  expect(commands).toMatch(/gh pr comment "\$PR_NUMBER"/);
  expect(commands).toContain('ApiBaseUrl');
  expect(preview.jobs.test?.steps.some((step) => step.run === 'CI=true bash .ci/run')).toBe(true);
});

test('closing a pull request destroys its preview', () => {
  const destroy = workflows['preview.yml']!.jobs.destroy!;
  expect(destroy.if).toContain("github.event.action == 'closed'");
  expect(destroy.steps.map((step) => step.run ?? '')).toContain('npx cdk destroy --all -c stage=pr-$PR_NUMBER --force');
});

test('a push to main deploys production only after the tests and the production environment approval', () => {
  const production = workflows['production.yml']!;
  expect(production.on.push?.branches).toEqual(['main']);
  const deploy = production.jobs.deploy!;
  expect(deploy.needs).toBe('test');
  expect(typeof deploy.environment === 'string' ? deploy.environment : deploy.environment?.name).toBe('production');
  expect(deploy.permissions?.['id-token']).toBe('write');
  expect(deploy.steps.map((step) => step.run ?? '').join('\n')).toContain('npx cdk deploy --all -c stage=prod');
});

test.each(workflowFiles)('every install, test and cdk command of %s is written in docs/DEPLOY.md', (file) => {
  const commands = deployCommands(workflows[file]!);
  expect(commands.length).toBeGreaterThan(0);
  for (const command of commands) expect(deployGuide).toContain(command);
});

test('every cdk command the README shows is one docs/DEPLOY.md documents', () => {
  const readme = new URL('README.md', root);
  const readmeCommands = existsSync(readme) ? shellLines(readFileSync(readme, 'utf8')).filter((line) => line.startsWith('npx cdk')) : [];
  for (const command of readmeCommands) expect(deployGuide).toContain(command);
});
