// A stand-in for the AWS CLI (`aws <service> <operation> --key value ...`) that serves the
// operations bin/rollback.sh and the production workflow's release record call, from a JSON state
// file (FAKE_AWS_STATE), answering with the response shapes of the AWS APIs (CLI v2, --output json)
// and their documented errors. It injects AWS's behaviour where no real account exists here; moto
// (the emulator used elsewhere) cannot invoke Lambda or check what a function version reads.
//   CloudFormation DescribeStacks: docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_DescribeStacks.html
//   Lambda GetAlias/UpdateAlias/GetFunctionConfiguration: docs.aws.amazon.com/lambda/latest/api/API_GetAlias.html,
//     API_UpdateAlias.html, API_GetFunctionConfiguration.html (no Qualifier: $LATEST)
//   SSM GetParametersByPath/PutParameter: docs.aws.amazon.com/systems-manager/latest/APIReference/API_GetParametersByPath.html
//     (without --recursive: the parameters one level below the path), API_PutParameter.html
//     (without --overwrite an existing name is ParameterAlreadyExists); Parameter Store keeps a
//     parameter's 100 newest versions (docs.aws.amazon.com/systems-manager/latest/userguide/sysman-paramstore-versions.html)
import { readFileSync, writeFileSync } from 'node:fs';

export interface FunctionVersion {
  Description: string;
  Environment: { Variables: Record<string, string> };
}
export interface FakeAwsState {
  stacks: Record<string, { Outputs: { OutputKey: string; OutputValue: string }[] }>;
  functions: Record<
    string,
    {
      versions: Record<string, FunctionVersion>;
      aliases: Record<string, { FunctionVersion: string; RoutingConfig?: { AdditionalVersionWeights: Record<string, number> } }>;
    }
  >;
  parameters: Record<string, { Value: string; Version: number; Type: string; LastModifiedDate?: string }[]>;
}

class AwsError extends Error {
  constructor(code: string, operation: string, message: string) {
    super(`An error occurred (${code}) when calling the ${operation} operation: ${message}`);
  }
}

function run(state: FakeAwsState, service: string, operation: string, args: Record<string, string | true>): unknown {
  const arg = (name: string): string => {
    const value = args[name];
    if (typeof value !== 'string') throw new AwsError('ValidationException', operation, `--${name} is required`);
    return value;
  };
  const fn = (name: string, op: string) => {
    const found = state.functions[name];
    if (!found) throw new AwsError('ResourceNotFoundException', op, `Function not found: ${name}`);
    return found;
  };
  switch (`${service} ${operation}`) {
    case 'cloudformation describe-stacks': {
      const stack = state.stacks[arg('stack-name')];
      if (!stack) throw new AwsError('ValidationError', 'DescribeStacks', `Stack with id ${arg('stack-name')} does not exist`);
      return { Stacks: [{ StackName: arg('stack-name'), StackStatus: 'UPDATE_COMPLETE', Outputs: stack.Outputs }] };
    }
    case 'lambda get-alias': {
      const alias = fn(arg('function-name'), 'GetAlias').aliases[arg('name')];
      if (!alias) throw new AwsError('ResourceNotFoundException', 'GetAlias', `Alias not found: ${arg('name')}`);
      return { Name: arg('name'), ...alias };
    }
    case 'lambda get-function-configuration': {
      const qualifier = typeof args.qualifier === 'string' ? args.qualifier : '$LATEST';
      const version = fn(arg('function-name'), 'GetFunctionConfiguration').versions[qualifier];
      if (!version)
        throw new AwsError(
          'ResourceNotFoundException',
          'GetFunctionConfiguration',
          `Function not found: ${arg('function-name')}:${qualifier}`,
        );
      return { FunctionName: arg('function-name'), Version: qualifier, ...version };
    }
    case 'lambda update-alias': {
      const target = fn(arg('function-name'), 'UpdateAlias');
      if (!target.versions[arg('function-version')])
        throw new AwsError(
          'ResourceNotFoundException',
          'UpdateAlias',
          `Function not found: ${arg('function-name')}:${arg('function-version')}`,
        );
      // Without --routing-config the alias keeps its routing; rollback.sh refuses to run while one is set.
      target.aliases[arg('name')] = { ...target.aliases[arg('name')], FunctionVersion: arg('function-version') };
      return { Name: arg('name'), ...target.aliases[arg('name')] };
    }
    case 'ssm get-parameters-by-path': {
      const path = arg('path').replace(/\/$/, '');
      // The CLI follows NextToken itself and prints every page as one list.
      return {
        Parameters: Object.entries(state.parameters)
          .filter(([name]) => name.startsWith(`${path}/`) && (args.recursive === true || !name.slice(path.length + 1).includes('/')))
          .map(([name, history]) => ({ Name: name, DataType: 'text', ...history.at(-1) })),
      };
    }
    case 'ssm put-parameter': {
      const history = state.parameters[arg('name')];
      if (history && args.overwrite !== true) throw new AwsError('ParameterAlreadyExists', 'PutParameter', 'The parameter already exists.');
      const next = (history ?? []).concat({
        Value: arg('value'),
        Version: (history?.at(-1)?.Version ?? 0) + 1,
        Type: arg('type'),
        LastModifiedDate: new Date().toISOString(),
      });
      state.parameters[arg('name')] = next.slice(-100);
      return { Version: next.at(-1)?.Version, Tier: 'Standard' };
    }
    default:
      throw new AwsError('InvalidAction', operation, `the fake does not serve ${service} ${operation}`);
  }
}

function parse(argv: string[]): Record<string, string | true> {
  const args: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const name = argv[i]?.replace(/^--/, '') ?? '';
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) {
      args[name] = true;
    } else {
      args[name] = value;
      i += 1;
    }
  }
  return args;
}

const [service = '', operation = '', ...rest] = process.argv.slice(2);
const path = process.env.FAKE_AWS_STATE ?? '';
const state = JSON.parse(readFileSync(path, 'utf8')) as FakeAwsState;
try {
  const result = run(state, service, operation, parse(rest));
  writeFileSync(path, JSON.stringify(state));
  process.stdout.write(`${JSON.stringify(result, null, 4)}\n`);
} catch (error) {
  process.stderr.write(`\n${(error as Error).message}\n`);
  // The CLI's exit status for an error the service returned.
  process.exit(error instanceof AwsError ? 254 : 255);
}
