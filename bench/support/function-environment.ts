// The environment a function process gets in the benchmark: what the deployed stack sets (as the
// local API does), pointed at the benchmark's DynamoDB Local, with metrics on as on Lambda so
// that each invocation pays for its metrics flush. Nothing else from the shell leaks in.
import { LAMBDA_NODE_OPTIONS } from '../../functions/deployment.ts';
import { handlerEnvironment } from '../../lib/local/local-environment.ts';

export interface BenchTables {
  events: string;
  idempotency: string;
}

export function functionEnvironment(endpoint: string, tables: BenchTables, functionName = 'bench'): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    // The credential keys' stand-in, when the bench started one (bench-credential-keys.ts).
    ...handlerEnvironment(endpoint, process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER),
    TABLE_NAME: tables.events,
    IDEMPOTENCY_TABLE_NAME: tables.idempotency,
    POWERTOOLS_METRICS_DISABLED: 'false',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    CORS_ALLOWED_ORIGINS: '',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    // As deployed: part of every cold start (and of the floor's, whose bundle has its map too).
    NODE_OPTIONS: LAMBDA_NODE_OPTIONS,
  };
}
