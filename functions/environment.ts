// The one reader of the function's environment variables that must be set: the table, queue,
// key and secret names the stack (lib/cdk/museum-functions.ts) and the local run
// (lib/local/local-environment.ts) give each function. A missing one is a deployment fault, so it
// throws (a 500 the handler logs), not a guess.
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
}
