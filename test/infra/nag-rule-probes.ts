// Constructs api-stack.test.ts adds to the production API stack to see this project's cdk-nag
// rules (lib/cdk/museum-nag-rules.ts) fail synthesis on them: the configurations with a `probe`
// in test/infra/configurations.ts. Run by the synthesizing process only
// (test/infra/synthesize-configurations.ts), which stores the error and the validation report
// the test reads.
import { Aws, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import { MUSEUM_NAG_RULES } from '../../lib/cdk/museum-nag-rules.ts';
import type { ProbeName } from './configurations.ts';

export const NAG_RULE_PROBES: Record<ProbeName, (api: Stack) => void> = {
  /** Museum-DDBGT1/2: a TableV2 without PITR or deletion protection, and one with both findings acknowledged. */
  'unprotected-global-tables': (api) => {
    new dynamodb.TableV2(api, 'Unprotected', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    const acknowledged = new dynamodb.TableV2(api, 'Acknowledged', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    Validations.of(acknowledged).acknowledge(
      { id: MUSEUM_NAG_RULES.pointInTimeRecovery, reason: 'test' },
      { id: MUSEUM_NAG_RULES.deletionProtection, reason: 'test' },
    );
  },
  /** Museum-RDP1: retained log groups with a fixed, a regional, a per-instance and a generated name, and a destroyed one with a fixed name. */
  'retained-fixed-names': (api) => {
    const retain = { removalPolicy: RemovalPolicy.RETAIN };
    new logs.LogGroup(api, 'FixedRetained', { ...retain, logGroupName: 'museum-fixed-name' });
    new logs.LogGroup(api, 'RegionalRetained', { ...retain, logGroupName: `museum-${Stack.of(api).region}-${Aws.ACCOUNT_ID}` });
    new logs.LogGroup(api, 'PerInstance', { ...retain, logGroupName: `museum-${Fn.select(2, Fn.split('/', Aws.STACK_ID))}` });
    new logs.LogGroup(api, 'Generated', retain);
    new logs.LogGroup(api, 'FixedDestroyed', { logGroupName: 'museum-destroyed-with-the-stack', removalPolicy: RemovalPolicy.DESTROY });
  },
};
