// The GitHub Actions workflows cannot run here: check that they parse, that they are wired as
// docs/DEPLOY.md says (previews and production assume different OIDC roles; previews per pull
// request, deleted on close without building the branch; production builds once, shows cdk diff
// with a read-only identity before the environment approval, then deploys that assembly), that
// every action is pinned to a commit SHA, and that every command they run is written in
// docs/DEPLOY.md exactly, as is every cdk command the README shows.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { releaseHistoryPath } from '../../lib/cdk/canary-releases.ts';

const root = new URL('../..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

interface Step {
  name?: string;
  if?: string;
  uses?: string;
  run?: string;
  with?: Record<string, string>;
}
interface Job {
  if?: string;
  env?: Record<string, string>;
  concurrency?: { group: string; 'cancel-in-progress'?: boolean };
  needs?: string | string[];
  environment?: string | { name: string };
  permissions?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  concurrency?: unknown;
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
    .filter((line) => /^(npx cdk|npm |CI=true |aws )/.test(line));
}

/** Lines of the fenced shell blocks of a Markdown file. */
function shellLines(markdown: string): string[] {
  return [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].flatMap((match) =>
    (match[1] ?? '').split('\n').map((line) => line.trim()),
  );
}

const deployGuide = shellLines(read('docs/DEPLOY.md'));

test('every workflow file parses as YAML', () => {
  expect(workflowFiles.sort()).toEqual(['preview-cleanup.yml', 'preview.yml', 'production.yml']);
});

const steps = (job: Job) => job.steps;
const runs = (job: Job) => job.steps.map((step) => step.run ?? '').join('\n');
const roleOf = (job: Job) =>
  job.steps.find((step) => step.uses?.startsWith('aws-actions/configure-aws-credentials@'))?.with?.['role-to-assume'];
const needs = (job: Job) => [job.needs ?? []].flat();

test.each(workflowFiles)('every action %s uses is pinned to a full commit SHA, with its release in a comment', (file) => {
  const text = read(`.github/workflows/${file}`);
  const uses = [...text.matchAll(/^\s*-?\s*uses:\s*(.+)$/gm)].map((match) => (match[1] ?? '').trim());
  expect(uses.length).toBeGreaterThan(0);
  for (const use of uses) expect(use).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
});

test('a pull request is tested, then deployed as stage pr-<number> with the preview role, and its URL commented', () => {
  const preview = workflows['preview.yml']!;
  expect(preview.on.pull_request?.types).toEqual(expect.arrayContaining(['opened', 'synchronize', 'reopened', 'closed']));
  const deploy = preview.jobs.deploy!;
  expect(deploy.needs).toBe('test');
  expect(deploy.permissions).toMatchObject({ 'id-token': 'write', 'pull-requests': 'write' });
  expect(roleOf(deploy)).toBe('${{ vars.AWS_PREVIEW_ROLE_ARN }}');
  expect(runs(deploy)).toContain('npx cdk deploy --all -c stage=pr-$PR_NUMBER');
  expect(runs(deploy)).toMatch(/gh pr comment "\$PR_NUMBER"/);
  expect(runs(deploy)).toContain('ApiBaseUrl');
  expect(preview.jobs.test?.steps.some((step) => step.run === 'CI=true bash .ci/run')).toBe(true);
  // The test job holds no AWS credentials at all.
  expect(preview.jobs.test?.permissions?.['id-token']).toBeUndefined();
  expect(roleOf(preview.jobs.test!)).toBeUndefined();
});

test('closing a pull request deletes its preview stacks by name, without checking out or building the branch', () => {
  const destroy = workflows['preview.yml']!.jobs.destroy!;
  expect(destroy.if).toContain("github.event.action == 'closed'");
  expect(roleOf(destroy)).toBe('${{ vars.AWS_PREVIEW_ROLE_ARN }}');
  expect(
    steps(destroy)
      .map((step) => step.uses ?? '')
      .filter((uses) => !uses.startsWith('aws-actions/configure-aws-credentials@')),
  ).toEqual(['']);
  expect(runs(destroy)).not.toMatch(/npm|npx|checkout/);
  for (const stack of ['MuseumApi-pr-$PR_NUMBER', 'MuseumMockApi-pr-$PR_NUMBER']) {
    expect(runs(destroy)).toContain(`aws cloudformation delete-stack --stack-name ${stack}`);
    expect(runs(destroy)).toContain(`aws cloudformation wait stack-delete-complete --stack-name ${stack}`);
  }
});

test('production and previews assume different roles, each from its own variable', () => {
  const roles = Object.fromEntries(
    Object.entries(workflows).flatMap(([file, workflow]) =>
      Object.entries(workflow.jobs)
        .filter(([, job]) => roleOf(job))
        .map(([name, job]) => [`${file} ${name}`, roleOf(job)]),
    ),
  );
  expect(roles).toEqual({
    'preview-cleanup.yml cleanup': '${{ vars.AWS_PREVIEW_CLEANUP_ROLE_ARN }}',
    'preview.yml deploy': '${{ vars.AWS_PREVIEW_ROLE_ARN }}',
    'preview.yml destroy': '${{ vars.AWS_PREVIEW_ROLE_ARN }}',
    'production.yml diff': '${{ vars.AWS_DIFF_ROLE_ARN }}',
    'production.yml deploy': '${{ vars.AWS_PRODUCTION_ROLE_ARN }}',
  });
});

test('a push to main is tested and synthesized once, diffed read-only before the approval, then that assembly is deployed', () => {
  const production = workflows['production.yml']!;
  expect(production.on.push?.branches).toEqual(['main']);
  const { build, diff, deploy } = production.jobs;
  // Build: tests and synthesis, no AWS access; the assembly becomes an artifact.
  expect(runs(build!)).toContain('CI=true bash .ci/run');
  expect(runs(build!)).toMatch(/npx cdk synth -c stage=prod .*--output cdk\.out/);
  expect(build!.permissions?.['id-token']).toBeUndefined();
  expect(roleOf(build!)).toBeUndefined();
  const upload = steps(build!).find((step) => step.uses?.startsWith('actions/upload-artifact@'));
  expect(upload?.with).toMatchObject({ name: 'cloud-assembly', path: 'cdk.out' });
  // Production refuses to build without somewhere for its alarms to go.
  expect(runs(build!)).toMatch(/if \[ -z "\$ALARM_EMAIL\$ALARM_TOPIC_ARN" \]; then[\s\S]*exit 1/);
  // Diff: after the build, outside the production environment, against the built assembly.
  expect(needs(diff!)).toEqual(['build']);
  expect(diff!.environment).toBeUndefined();
  expect(runs(diff!)).toContain('npx cdk diff --app cdk.out --all --method=template');
  // Deploy: only after the diff, behind the production environment's approval, the same assembly.
  expect(needs(deploy!)).toEqual(expect.arrayContaining(['build', 'diff']));
  expect(typeof deploy!.environment === 'string' ? deploy!.environment : deploy!.environment?.name).toBe('production');
  expect(deploy!.permissions?.['id-token']).toBe('write');
  for (const job of [diff!, deploy!]) {
    expect(steps(job).find((step) => step.uses?.startsWith('actions/download-artifact@'))?.with).toMatchObject({
      name: 'cloud-assembly',
      path: 'cdk.out',
    });
  }
  expect(runs(deploy!)).toContain('npx cdk deploy --app cdk.out --all');
  // A table newly declared under an existing table's name is imported (restore.test.ts: only with Retain and a static name).
  expect(runs(deploy!)).toContain('--import-existing-resources');
  expect(runs(deploy!)).not.toMatch(/cdk synth|CI=true|-c stage=/);
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

test('production is synthesized for the configured region, and the build refuses to run without one', () => {
  const build = workflows['production.yml']!.jobs.build!;
  expect(build.env?.AWS_REGION).toBe('${{ vars.AWS_REGION }}');
  expect(runs(build)).toMatch(/if \[ -z "\$AWS_REGION" \]; then[\s\S]*exit 1/);
  const guard = steps(build).findIndex((step) => step.run?.includes('"$AWS_REGION"'));
  const synth = steps(build).findIndex((step) => step.run?.includes('npx cdk synth'));
  expect(guard).toBeGreaterThanOrEqual(0);
  expect(guard).toBeLessThan(synth);
});

test('a newer push never waits behind a pending approval: only the deploy job is serialized', () => {
  const production = workflows['production.yml']!;
  expect(production.concurrency).toBeUndefined();
  expect(production.jobs.build!.concurrency).toBeUndefined();
  expect(production.jobs.diff!.concurrency).toBeUndefined();
  expect(production.jobs.deploy!.concurrency).toEqual({ group: 'production-deploy', 'cancel-in-progress': false });
});

test('every deploy names its release (the commit), so each release is one new version of every function', () => {
  expect(runs(workflows['production.yml']!.jobs.build!)).toContain('npx cdk synth -c stage=prod -c release="$GITHUB_SHA"');
  expect(runs(workflows['preview.yml']!.jobs.deploy!)).toContain('npx cdk deploy --all -c stage=pr-$PR_NUMBER -c release="$GITHUB_SHA"');
});

test('the preview is smoke-tested after its deploy as a temporary editor with a generated password, removed on any exit', () => {
  const deploy = workflows['preview.yml']!.jobs.deploy!;
  const smoke = steps(deploy).find((step) => step.run?.includes('npm run smoke'));
  expect(smoke).toBeDefined();
  const script = smoke!.run!;
  expect(script).toMatch(
    /MUSEUM_API_PASSWORD=\$\(npm run -s users -- add "\$MUSEUM_API_USERNAME" --role editor --table "\$table" --secret "\$secret" < \/dev\/null\)/,
  );
  expect(script).toMatch(/trap 'npm run users -- remove "\$MUSEUM_API_USERNAME" --table "\$table"' EXIT/);
  expect(script.indexOf('trap')).toBeLessThan(script.indexOf('npm run -s users -- add'));
  expect(script.indexOf('::add-mask::$MUSEUM_API_PASSWORD')).toBeLessThan(script.indexOf('npm run smoke'));
  const deployIndex = steps(deploy).findIndex((step) => step.run?.includes('npx cdk deploy'));
  expect(steps(deploy).indexOf(smoke!)).toBeGreaterThan(deployIndex);
});

test('production is smoke-tested read-only after its deploy, and only then recorded as a good release, last', () => {
  const deploy = workflows['production.yml']!.jobs.deploy!;
  const index = (text: string) => steps(deploy).findIndex((step) => step.run?.includes(text));
  expect(index('npm run smoke -- --read-only')).toBeGreaterThan(index('npx cdk deploy'));
  const record = steps(deploy).at(-1)!;
  expect(record.name).toBe('Record the release as good');
  // A new parameter per record under the history's path, never an overwrite (test/infra/rollback.test.ts runs it).
  expect(record.run).toContain(
    `aws ssm put-parameter --name "${releaseHistoryPath('prod')}/$(jq -nr 'now * 1000 | floor')-released-$GITHUB_SHA"`,
  );
  expect(record.run).not.toContain('--overwrite');
  expect(record.if).toBeUndefined(); // runs only when every step before it succeeded
  expect(read('bin/rollback.sh')).toContain('history_path="/museum-special-events/$stage/releases"');
  expect(read('bin/rollback.sh')).not.toContain('--overwrite');
  expect(releaseHistoryPath('$stage')).toBe('/museum-special-events/$stage/releases');
});

test("the production job fails unless it runs for main, and the build fails unless the environment's protection rules hold", () => {
  const production = workflows['production.yml']!;
  const [first] = steps(production.jobs.deploy!);
  expect(first?.run).toMatch(/if \[ "\$GITHUB_REF" != refs\/heads\/main \]; then[\s\S]*exit 1/);
  const build = production.jobs.build!;
  expect(build.permissions).toEqual({ contents: 'read', actions: 'read' });
  const rule = steps(build).findIndex((step) => step.run?.includes('environments/production/deployment-branch-policies'));
  expect(rule).toBeGreaterThanOrEqual(0);
  expect(rule).toBeLessThan(steps(build).findIndex((step) => step.run?.includes('npx cdk synth')));
  expect(rule).toBeLessThan(steps(build).findIndex((step) => step.run?.includes('.ci/run')));
});

test("the environment check passes only with required reviewers, no self-review, no administrators' bypass and main only, as GitHub's API lists them", () => {
  const script = steps(workflows['production.yml']!.jobs.build!).find((step) => step.run?.includes('deployment-branch-policies'))!.run!;
  const dir = mkdtempSync(join(tmpdir(), 'museum-gh-'));
  try {
    // `gh api <path> [--jq <filter>]` as GitHub answers (docs.github.com/rest/deployments/environments, .../branch-policies).
    const fakeGh = (environment: unknown, policies: unknown) => {
      writeFileSync(join(dir, 'environment.json'), JSON.stringify(environment));
      writeFileSync(join(dir, 'policies.json'), JSON.stringify(policies));
      writeFileSync(
        join(dir, 'gh'),
        `#!/bin/sh\ncase "$2" in */deployment-branch-policies) f=policies ;; *) f=environment ;; esac\n` +
          `if [ "$3" = --jq ]; then exec jq -r "$4" "${dir}/$f.json"; else exec cat "${dir}/$f.json"; fi\n`,
      );
      chmodSync(join(dir, 'gh'), 0o755);
      const result = spawnSync('bash', ['-e', '-c', script], {
        env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, GITHUB_REPOSITORY: 'museum/api' },
        encoding: 'utf8',
      });
      return { status: result.status, error: result.stdout.split('\n').find((line) => line.startsWith('::error::')) ?? '' };
    };
    const policy = (...names: string[]) => ({
      total_count: names.length,
      branch_policies: names.map((name) => ({ name, type: 'branch' })),
    });
    const reviewers = (preventSelfReview: boolean, count = 1) => ({
      id: 2,
      node_id: 'GA_2',
      type: 'required_reviewers',
      prevent_self_review: preventSelfReview,
      reviewers: Array.from({ length: count }, (_, i) => ({ type: 'User', reviewer: { login: `reviewer${i}`, id: i } })),
    });
    const environment = (overrides: Record<string, unknown> = {}) => ({
      id: 1,
      name: 'production',
      can_admins_bypass: false,
      protection_rules: [reviewers(true), { id: 3, node_id: 'GA_3', type: 'branch_policy' }],
      deployment_branch_policy: { protected_branches: false, custom_branch_policies: true },
      ...overrides,
    });
    expect(fakeGh(environment(), policy('main'))).toEqual({ status: 0, error: '' });
    expect(fakeGh(environment({ can_admins_bypass: true }), policy('main')).error).toMatch(/administrators may bypass/);
    expect(fakeGh(environment({ protection_rules: [reviewers(false)] }), policy('main')).error).toMatch(/self-review allowed/);
    expect(fakeGh(environment({ protection_rules: [reviewers(true, 0)] }), policy('main')).error).toMatch(/no required reviewers/);
    const nothing = fakeGh(
      { id: 1, name: 'production', can_admins_bypass: true, protection_rules: [], deployment_branch_policy: null },
      policy(),
    );
    expect(nothing.status).toBe(1);
    expect(nothing.error).toBe(
      '::error::Settings > Environments > production: no required reviewers; self-review allowed (tick Prevent self-review); ' +
        'administrators may bypass the rules (untick Allow administrators to bypass); deployment branches are none (set Selected branches, main only).',
    );
    const protectedBranches = environment({ deployment_branch_policy: { protected_branches: true, custom_branch_policies: false } });
    expect(fakeGh(protectedBranches, policy()).status).toBe(1);
    expect(fakeGh(environment(), policy('main', 'release/*')).error).toMatch(/deployment branches are branch:main,branch:release\/\*/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('only the build job, which holds no credentials, runs install scripts; every job with AWS credentials installs with --ignore-scripts', () => {
  const production = workflows['production.yml']!;
  for (const [name, job] of Object.entries(production.jobs)) {
    const installs = (job.steps
      .map((step) => step.run ?? '')
      .join('\n')
      .match(/npm (ci|install|i)\b[^\n]*/g) ?? []) as string[];
    if (roleOf(job) || job.permissions?.['id-token'] === 'write') {
      expect([name, roleOf(job)]).toEqual([name, expect.stringMatching(/^\$\{\{ vars\.AWS_\w+_ROLE_ARN \}\}$/)]);
      expect([name, installs]).toEqual([name, ['npm ci --ignore-scripts --no-audit --no-fund']]);
      // Installed before the credentials arrive, and nothing but the CDK CLI, the smoke test and the AWS CLI runs after them.
      const credentials = job.steps.findIndex((step) => step.uses?.startsWith('aws-actions/configure-aws-credentials@'));
      expect(job.steps.findIndex((step) => step.run?.includes('npm ci'))).toBeLessThan(credentials);
      const after = job.steps
        .slice(credentials + 1)
        .flatMap((step) => (step.run ?? '').split('\n'))
        .map((line) => line.trim())
        .filter((line) => /^(npx|npm) /.test(line));
      for (const line of after) expect(line).toMatch(/^(npx cdk (diff|deploy) --app cdk\.out |npm run smoke -- --read-only$)/);
    } else {
      expect(name).toBe('build');
      expect(runs(job)).toContain('CI=true bash .ci/run'); // npm ci with scripts, then the tests
    }
  }
  expect(read('.ci/run')).toMatch(/^npm ci --no-audit --no-fund$/m);
});

test('a nightly workflow deletes previews of closed pull requests, by name, without building anything', () => {
  const cleanup = workflows['preview-cleanup.yml']!;
  expect(Object.keys(cleanup.on)).toEqual(expect.arrayContaining(['schedule']));
  const job = cleanup.jobs.cleanup!;
  expect(runs(job)).not.toMatch(/npm|npx|checkout/);
  expect(runs(job)).toContain('gh pr list --state open');
  expect(runs(job)).toContain('aws cloudformation delete-stack --stack-name "$stack"');
});
