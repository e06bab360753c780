// The local run's own settings never reach a deployed function: WEBHOOK_ALLOW_LOOPBACK (webhook
// URLs on loopback over http, functions/webhooks/webhook-url.ts) and WEBHOOK_RETRY_SCALE (the
// compressed retry schedule, functions/webhooks/retry-schedule.ts; MUSEUM_WEBHOOK_RETRY_SCALE is
// the local run's name for it). Every stack of a production stage, a preview stage and a stage
// with restored tables attached is synthesized with those variables set in the synthesizing
// process (SYNTHESIS_ENVIRONMENT, test/infra/configurations.ts: every configuration is), as an
// operator's shell after `npm start` might have them, and no function of any template carries them.
import { SYNTHESIS_ENVIRONMENT } from './configurations.ts';
import { synthesize, templateFiles } from './synthesize.ts';

const LOCAL_ONLY = ['WEBHOOK_ALLOW_LOOPBACK', 'WEBHOOK_RETRY_SCALE', 'MUSEUM_WEBHOOK_RETRY_SCALE'];

const STAGES: Record<string, Record<string, string>> = {
  production: { alarmEmail: 'ops@museum.example' },
  preview: { stage: 'pr-3' },
  'production with restored tables attached': {
    alarmEmail: 'ops@museum.example',
    eventsTableName: 'MuseumApi-prod-TablesEvents-restored-20261124',
    eventsTableStreamArn:
      'arn:aws:dynamodb:eu-west-1:123456789012:table/MuseumApi-prod-TablesEvents-restored-20261124/stream/2026-11-24T10:00:00.000',
    idempotencyTableName: 'MuseumApi-prod-TablesIdempotency-restored-20261124',
  },
};

interface Template {
  Resources?: Record<string, { Type: string; Properties?: { Environment?: { Variables?: Record<string, unknown> } } }>;
}

/** Every template synthesized into `outdir`, by file name. */
function templates(outdir: string): Record<string, Template> {
  return Object.fromEntries(templateFiles(outdir).map(({ file, text }) => [file, JSON.parse(text) as Template]));
}

test.each(Object.keys(STAGES))(
  '%s: no function of any stack sets the local-only settings',
  (stage) => {
    const synthesized = synthesize(STAGES[stage]);
    // The synthesizing process had every one of them set.
    expect(Object.keys(SYNTHESIS_ENVIRONMENT).sort()).toEqual([...LOCAL_ONLY].sort());
    expect(synthesized.environment).toEqual(SYNTHESIS_ENVIRONMENT);
    const all = templates(synthesized.outdir);
    let functions = 0;
    for (const [file, template] of Object.entries(all)) {
      // Not in any function's environment, nor anywhere else in the template.
      for (const name of LOCAL_ONLY) expect({ file, mentions: JSON.stringify(template).includes(name) }).toEqual({ file, mentions: false });
      for (const [id, resource] of Object.entries(template.Resources ?? {})) {
        if (resource.Type !== 'AWS::Lambda::Function') continue;
        functions++;
        const variables = Object.keys(resource.Properties?.Environment?.Variables ?? {});
        expect({ id, local: variables.filter((name) => LOCAL_ONLY.includes(name)) }).toEqual({ id, local: [] });
      }
    }
    // The webhook functions (consumer and delivery) and the API's are among them.
    expect(functions).toBeGreaterThan(10);
  },
  300_000,
);
