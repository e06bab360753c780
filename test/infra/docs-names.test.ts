// Every name the documentation cites, of the kinds an operator copies into a command or looks
// for in a console, exists in the code or the synthesized production templates: index names,
// npm scripts, repository paths, stack outputs, log groups, alarms and the dashboard. Names are
// read from the Markdown's code spans and code blocks, and the truth from the code at test time
// (the index names from functions/store/table-definition.ts), never from a copy here.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { eventsTable } from '../../functions/store/table-definition.ts';
import { resourcesOfType, synthesize, type Synthesized } from './synthesize.ts';

const root = new URL('../..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const DOCS = [
  'README.md',
  ...readdirSync(new URL('docs/', root))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];
/** Index names the data model's migration notes (README, PERFORMANCE) mention as replaced; never in the runbooks. */
const RETIRED_INDEXES = ['byDate'];

/** Code spans, and the lines of fenced blocks, of a Markdown file. */
function cited(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  const prose = markdown.replace(/```[a-z]*\n[\s\S]*?```/g, '');
  return [...[...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? ''), ...blocks.flatMap((block) => block.split('\n'))];
}

let prod: Synthesized;
beforeAll(() => {
  prod = synthesize({ alarmEmail: 'ops@museum.example' });
});

const outputsOf = (app: Synthesized) => ({
  'MuseumApi-prod': Object.keys(app.apiTemplate.toJSON().Outputs ?? {}),
  'MuseumMockApi-prod': Object.keys(app.mockTemplate.toJSON().Outputs ?? {}),
});

/** A CloudFormation string value with every intrinsic function replaced by `<...>`. */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] } | undefined)?.['Fn::Join'];
  return join ? join[1].map(render).join(join[0]) : '<...>';
}

/** A documented name with placeholders (`<stage>`, `<stack UUID>`) as a pattern over a rendered template name. */
function documentedPattern(name: string): RegExp {
  return new RegExp(
    `^${name
      .replace('<stage>', 'prod')
      .split(/<[^>]+>/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.+')}$`,
  );
}

test.each(DOCS)('%s names only indexes the events table has', (file) => {
  const indexes = eventsTable.globalSecondaryIndexes.map((index) => index.indexName as string);
  const named = cited(read(file)).filter((span) => /^by[A-Z][A-Za-z]*$/.test(span));
  const allowed = file === 'docs/DEPLOY.md' ? indexes : [...indexes, ...RETIRED_INDEXES];
  for (const name of named) expect({ file, index: name, exists: allowed.includes(name) }).toEqual({ file, index: name, exists: true });
  if (file === 'docs/DEPLOY.md') expect(named.sort()).toEqual(expect.arrayContaining(indexes.sort()));
});

test.each(DOCS)('%s names only npm scripts and repository files that exist', (file) => {
  const text = read(file);
  const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
  for (const [, name] of text.matchAll(/\bnpm run (?:-s )?([\w-]+(?::[\w-]+)*)/g))
    expect({ file, script: name, exists: scripts.includes(name!) }).toEqual({ file, script: name, exists: true });
  for (const [, name] of text.matchAll(/\bnpm (test|start)\b/g)) expect(scripts).toContain(name);
  const paths = cited(text).filter((span) => /^(\.github|bin|lib|functions|test|scripts|docs|bench|openapi)\/[\w./-]*$/.test(span));
  for (const path of paths) expect({ file, path, exists: existsSync(new URL(path, root)) }).toEqual({ file, path, exists: true });
});

test.each(DOCS)('%s names only stack outputs, log groups and the dashboard the production templates have', (file) => {
  const outputs = outputsOf(prod);
  const template = prod.apiTemplate.toJSON() as { Resources: Record<string, { Type: string; Properties?: any }> };
  const logGroups = Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::Logs::LogGroup')
    .map((r) => render(r.Properties?.LogGroupName));
  const dashboards = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::CloudWatch::Dashboard')).map((r) =>
    render(r.Properties?.DashboardName),
  );
  const checked: string[] = [];
  for (const span of cited(read(file))) {
    checked.push(span);
    const qualified = /^(MuseumApi|MuseumMockApi)-[a-z0-9<>-]+\.([A-Za-z0-9]+)$/.exec(span);
    if (qualified)
      expect({ file, output: span, exists: outputs[`${qualified[1]!}-prod` as keyof typeof outputs].includes(qualified[2]!) }).toEqual({
        file,
        output: span,
        exists: true,
      });
    if (/^[A-Z][A-Za-z0-9]*(BaseUrl|TableName|SetName|SetId|TopicArn|Versions|DomainTarget)$/.test(span)) {
      expect({ file, output: span, exists: Object.values(outputs).flat().includes(span) }).toEqual({ file, output: span, exists: true });
    }
    if (/^(aws-waf-logs-|API-Gateway-Execution-Logs_)/.test(span)) {
      const found = span.endsWith('-')
        ? logGroups.some((name) => name.startsWith(span))
        : logGroups.some((name) => documentedPattern(span).test(name));
      expect({ file, logGroup: span, exists: found }).toEqual({ file, logGroup: span, exists: true });
    }
    if (/^museum-special-events-[a-z<]/.test(span))
      expect({ file, dashboard: span, exists: dashboards.some((name) => documentedPattern(span).test(name)) }).toEqual({
        file,
        dashboard: span,
        exists: true,
      });
  }
  // The runbook cites one of each kind, so the checks above are not vacuous.
  if (file === 'docs/DEPLOY.md') {
    expect(checked).toEqual(
      expect.arrayContaining([
        'MuseumApi-prod.TableName',
        'ReleaseVersions',
        'BlockedIpv4SetId',
        'aws-waf-logs-museum-special-events-<stage>-<stack UUID>',
        'museum-special-events-prod',
      ]),
    );
  }
});

test('the alarms the runbooks name exist in the production template', () => {
  const alarmIds = Object.keys(resourcesOfType(prod.apiTemplate, 'AWS::CloudWatch::Alarm'));
  const exists = (name: string) =>
    alarmIds.some((id) => {
      const kind = name.replace('<Handler>', '[A-Za-z]+');
      // Monitoring's and Releases' alarms are named <kind>Alarm; the webhook pipeline's, <kind>.
      return new RegExp(`^((Monitoring|Releases)${kind}Alarm|WebhookPipeline${kind})[0-9A-F]{8}$`).test(id);
    });
  const deploy = read('docs/DEPLOY.md');
  // The alarm table's first column ("EventsTable/IdempotencyTable Throttles" names two alarms).
  const table = deploy.slice(deploy.indexOf('## Alarms and their runbook'), deploy.indexOf('### Blocking an address by hand'));
  const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Alarm') && !line.startsWith('|---'));
  const names = rows.flatMap((row) => {
    const cell = row.split('|')[1]!.trim();
    const [kinds, suffix = ''] = cell.split(' ');
    return kinds!.split('/').map((kind) => `${kind}${suffix}`);
  });
  expect(names.length).toBeGreaterThanOrEqual(10);
  const spans = DOCS.flatMap((file) => cited(read(file))).filter((span) =>
    /^(<Handler>|[A-Z])[A-Za-z]*(Errors|ErrorRate|Latency|Failures|Throttles|Duration|Logins)$/.test(span),
  );
  for (const name of [...names, ...spans]) expect({ alarm: name, exists: exists(name) }).toEqual({ alarm: name, exists: true });
});

test('no runbook promises an AWS Backup recovery point: there is no AWS Backup plan', () => {
  const plans = Object.keys(resourcesOfType(prod.apiTemplate, 'AWS::Backup::BackupPlan'));
  const claims = DOCS.filter((file) => file.startsWith('docs/'))
    .flatMap((file) => read(file).split(/(?<=\.)\s/))
    .filter((sentence) => sentence.includes('AWS Backup') && !sentence.includes('no AWS Backup'));
  expect(plans.length > 0 || claims.length === 0 ? [] : claims).toEqual([]);
});

/** Code the documents may name: every tracked source, script, workflow and configuration file. */
function codeCorpus(): string {
  const tracked = execFileSync('git', ['ls-files', '*.ts', '*.js', '*.sh', '*.yml', '*.yaml', '*.json'], { cwd: root, encoding: 'utf8' });
  return tracked
    .split('\n')
    .filter((path) => path && path !== 'package-lock.json' && !path.startsWith('openapi/openapi.json'))
    .map((path) => read(path))
    .join('\n');
}

/**
 * camelCase names the documents may cite although no code of ours spells them, each for its reason:
 * a setting of AWS's that the runbook weighs and the stack does not use, and the attributes of
 * items an earlier release wrote, which the store README's migration runbook tells operators about.
 */
const NAMES_NOT_IN_CODE: Record<string, string> = {
  usageIdentifierKey: 'API Gateway usage-plan setting discussed in docs/DEPLOY.md, not deployed',
  monthTags: 'attribute of base items written before the current store (migration runbook)',
  leaseUntil: 'attribute of base items written before the current store (migration runbook)',
  leaseId: 'attribute of base items written before the current store (migration runbook)',
};

const DOCUMENTS_WITH_CODE_NAMES = [...DOCS, 'functions/store/README.md', 'openapi/README.md'];

test.each(DOCUMENTS_WITH_CODE_NAMES)('%s names only functions, variables and attributes the code has', (file) => {
  const code = codeCorpus();
  const names = cited(read(file))
    .map((span) => /^([a-z][a-z0-9]*[A-Z][A-Za-z0-9]*)(\(\))?$/.exec(span)?.[1])
    .filter((name): name is string => name !== undefined && !(name in NAMES_NOT_IN_CODE));
  for (const name of names) expect({ file, name, exists: code.includes(name) }).toEqual({ file, name, exists: true });
});
