// Synthesizes the CDK app as `npx cdk synth` does (cdk.json's feature flags, cdk-nag on) for a
// given context, into a temporary directory, and hands back the templates.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addMuseumStacks, type MuseumApp } from '../../lib/museum-app.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };

export interface Synthesized extends MuseumApp {
  apiTemplate: Template;
  mockTemplate: Template;
  outdir: string;
  /** cdk-nag's findings (violations of any severity) from the validation report. */
  nagViolations: { ruleName: string; severity: string; paths: string[] }[];
  cleanup: () => void;
}

export function synthesize(context: Record<string, string> = {}): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'museum-cdk-test-'));
  const cleanup = () => rmSync(outdir, { recursive: true, force: true });
  const app = new App({ outdir, context: { ...cdkJson.context, ...context } });
  let stacks: MuseumApp;
  try {
    stacks = addMuseumStacks(app);
    // Unacknowledged cdk-nag findings make this throw, as they make `cdk synth` fail.
    app.synth();
  } catch (error) {
    cleanup();
    throw error;
  }
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { violations: { ruleName: string; severity: string; violatingConstructs: { constructPath: string }[] }[] }[];
  };
  return {
    ...stacks,
    apiTemplate: Template.fromStack(stacks.api),
    mockTemplate: Template.fromStack(stacks.mock),
    outdir,
    nagViolations: report.pluginReports.flatMap((plugin) =>
      plugin.violations.map((v) => ({ ruleName: v.ruleName, severity: v.severity, paths: v.violatingConstructs.map((c) => c.constructPath) })),
    ),
    cleanup,
  };
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string }>;

export function resourcesOfType(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** `/v1.1/special-events/{eventId}` for an AWS::ApiGateway::Resource logical id, from its PathPart chain. */
export function resourcePath(template: Template, resourceId: unknown): string {
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const parts: string[] = [];
  let current = resourceId;
  while (current && typeof current === 'object' && 'Ref' in current) {
    const resource = resources[(current as { Ref: string }).Ref];
    if (!resource) break;
    parts.unshift(String(resource.Properties?.PathPart));
    current = resource.Properties?.ParentId;
  }
  return `/${parts.join('/')}`;
}
