// `npm run users -- <command>`: manage API users.
//   add <name> --role viewer|partner|editor    passwd <name>    remove <name>    list    migrate
// Credentials are generated (192 random bits) and printed as the ONE line of standard output, so
// scripts can capture them: `password=$(npm run -s users -- add kiosk-3 --role viewer < /dev/null)`.
// A password piped on standard input is taken as the chosen one (at least 20 characters); never
// from an argument (it would land in shell history and process listings). Everything else goes to
// standard error. Arguments, the chosen password and a deployed secret are checked before anything starts.
// Target: the local store (the running `npm start`'s DynamoDB Local, or .data/ directly under its
// lock; lib/cli/operator-store.ts says which run), or a deployed table with `--table <name> --secret <arn|name>`
// (AWS credentials and region from the usual AWS_* settings).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDocumentClient } from '../functions/store/dynamodb-client.ts';
import {
  chosenCredentialProblem,
  generateCredential,
  hashCredential,
  parseCredentialKeys,
  type CredentialKeys,
} from '../functions/auth/credentials.ts';
import { ROLES, type Role } from '../functions/routes.ts';
import { USERNAME_PATTERN, UsersStore } from '../functions/auth/users-store.ts';
import { readCredentialKeysFile } from '../lib/local/credential-keys-file.ts';
import { credentialKeysFile, DATA_DIRECTORY } from '../lib/local/local-environment.ts';
import { runningRuns } from '../lib/local/run-registry.ts';
import { openStore, storeSettingsProblem, type Store } from '../lib/cli/operator-store.ts';

const USAGE = `Usage: npm run -s users -- <command> [options]
  add <name> --role ${ROLES.join('|')}
                                    create a user; prints its generated password (one line)
  passwd <name>                     issue a new password; prints it (one line)
  remove <name>                     delete a user
  list                              list users: name, role, credential key id (or "scrypt: migrate")
  migrate                           re-issue the users an older release stored with scrypt; prints name<TAB>password
A password piped on stdin to add or passwd is taken instead of a generated one (at least 20 characters).
Options:
  --table <name>    act on a deployed table (AWS credentials and region from the environment)
  --secret <id>     its credential keys' secret (ARN or name: the stack's output CredentialKeysSecretArn)
  --region <name>   AWS region for --table and --secret (default: AWS_REGION)`;

const COMMANDS = ['add', 'passwd', 'remove', 'list', 'migrate'] as const;
type Command = (typeof COMMANDS)[number];
/** The commands that hash a credential, so need the credential keys. */
const ISSUING: readonly Command[] = ['add', 'passwd', 'migrate'];

const OPTIONS = {
  role: { type: 'string' },
  table: { type: 'string' },
  secret: { type: 'string' },
  region: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** How long a removed user or an old password keeps working for a client that already used it. */
const CACHE_NOTE =
  "Clients that already authenticated with the old credentials keep access for up to 5 minutes: the gateway caches the authorizer's answer for 300 s.";

interface Arguments {
  command: Command;
  username?: string;
  role?: Role;
  table?: string;
  secret?: string;
  region?: string;
}

/** A refusal: one line on stderr and exit code 2. */
function refuse(line: string): number {
  console.error(line);
  return 2;
}

/** Everything about the arguments, checked before anything starts (no Java for a typo). */
function parseArguments(): Arguments | number {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, strict: true, tokens: true, options: OPTIONS });
  } catch (error) {
    // Node's messages run over several sentences: one line naming the option instead.
    const option = /'(-[^' ]+)/.exec((error as Error).message)?.[1];
    const code = (error as { code?: string }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return refuse(`Unknown option ${option ?? ''}: npm run users -- --help lists them.`);
    return refuse(`${option ?? 'An option'} needs a value: npm run users -- --help lists them.`);
  }
  const { values, positionals, tokens } = parsed;
  // parseArgs keeps the last of a repeated option: `--role editor --role viewer` would silently be a viewer.
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) return refuse(`--${token.name} is given more than once: give it once.`);
    seen.add(token.name);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [command, username, ...extra] = positionals;
  if (!command || !COMMANDS.includes(command as Command))
    return refuse(`${command ? `Unknown command ${command}` : 'A command is required'}: npm run users -- --help lists them.`);
  const takesName = command !== 'list' && command !== 'migrate';
  if (!takesName && username !== undefined) return refuse(`${command} takes no name.`);
  if (takesName && (!username || !USERNAME_PATTERN.test(username)))
    return refuse('A username (letters, digits and . _ @ -, at most 64) is required.');
  if (extra.length > 0) return refuse(`Unexpected arguments: ${extra.join(' ')}.`);
  if (command === 'add' && !ROLES.includes(values.role as Role)) {
    const accepted = `${ROLES.slice(0, -1).join(', ')} or ${ROLES.at(-1)}`;
    return refuse(
      values.role === undefined ? `add needs --role ${ROLES.join('|')}.` : `--role ${values.role} is not a role: use ${accepted}.`,
    );
  }
  if (command !== 'add' && values.role !== undefined) return refuse('--role applies to add only.');
  if (values.table === undefined && (values.region !== undefined || values.secret !== undefined))
    return refuse(`--${values.region !== undefined ? 'region' : 'secret'} applies with --table only.`);
  if (values.table !== undefined && ISSUING.includes(command as Command) && values.secret === undefined)
    return refuse(`${command} --table needs --secret <arn|name>: the stack's output CredentialKeysSecretArn.`);
  const settingsProblem = values.table === undefined ? storeSettingsProblem() : undefined;
  if (settingsProblem) {
    console.error(settingsProblem);
    return 2;
  }
  return {
    command: command as Command,
    username,
    role: values.role as Role | undefined,
    table: values.table,
    secret: values.secret,
    region: values.region,
  };
}

/** `http://localhost:8000/` and `http://127.0.0.1:8000` are one endpoint. */
function sameEndpoint(a: string, b: string): boolean {
  const normal = (endpoint: string) => {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.hostname === 'localhost' ? '127.0.0.1' : url.hostname}:${url.port}`;
  };
  try {
    return normal(a) === normal(b);
  } catch {
    return false;
  }
}

/** A file's text, or undefined when it cannot be read (not there yet). */
function textOf(path: string | undefined): string | undefined {
  try {
    return path === undefined ? undefined : readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * With DYNAMODB_ENDPOINT: a refusal when running local APIs (`npm start`) keep their users there
 * and none verifies them with this data directory's credential keys (an in-memory run, or a run
 * of another MUSEUM_DATA_DIR). The CLI would hash with its own key (creating one, under the
 * same id `k1`, if the directory has none), and the user it adds could never log in there.
 */
function otherRunsKeysProblem(endpoint: string): string | undefined {
  const ours = textOf(credentialKeysFile());
  const runsThere = runningRuns().filter((candidate) => sameEndpoint(candidate.dynamodbEndpoint, endpoint));
  // A run of this data directory's keys is the one the CLI acts for (as `npm start` advises it).
  if (runsThere.some((candidate) => textOf(candidate.credentialKeysFile) === ours)) return undefined;
  const run = runsThere[0];
  if (!run) return undefined;
  const where =
    run.store === 'in memory'
      ? `MUSEUM_DATA_DIR=${run.dataDirectory} MUSEUM_IN_MEMORY=1 without DYNAMODB_ENDPOINT`
      : `MUSEUM_DATA_DIR=${run.dataDirectory}`;
  return (
    `DYNAMODB_ENDPOINT=${endpoint} is the store of the local API running${run.url ? ` on ${run.url}` : ''} (pid ${run.pid}), whose credential keys are not those of ${DATA_DIRECTORY}: ` +
    `its users would never log in; run the CLI with ${where}.`
  );
}

/**
 * The credential to set: the one piped on stdin (the chosen one, checked), or a generated one
 * when there is none (a terminal, or empty input such as `< /dev/null`).
 */
async function credentialFromInput(): Promise<{ password: string; generated: boolean } | string> {
  if (!process.stdin.isTTY) {
    let input = '';
    for await (const chunk of process.stdin) input += String(chunk);
    const chosen = input.replace(/\r?\n$/, '');
    if (chosen !== '') return chosenCredentialProblem(chosen) ?? { password: chosen, generated: false };
  }
  return { password: generateCredential(), generated: true };
}

/** A deployed stack's credential keys (GetSecretValue with the operator's AWS credentials). */
async function deployedKeys(secret: string, region: string | undefined): Promise<CredentialKeys> {
  const client = new SecretsManagerClient(region ? { region } : {});
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secret }));
    if (SecretString === undefined) throw new Error(`The secret ${secret} holds no SecretString`);
    return parseCredentialKeys(SecretString);
  } finally {
    client.destroy();
  }
}

/** The chosen or generated credential (add, passwd) and a deployed stack's keys: what is checked before anything starts. */
async function inputsBeforeStart(
  command: Command,
  secret: string | undefined,
  region: string | undefined,
): Promise<{ credential?: { password: string; generated: boolean }; keys?: CredentialKeys } | number> {
  let credential: { password: string; generated: boolean } | undefined;
  let keys: CredentialKeys | undefined;
  try {
    if (command === 'add' || command === 'passwd') {
      const input = await credentialFromInput();
      if (typeof input === 'string') {
        console.error(input);
        return 1;
      }
      credential = input;
    }
    if (secret !== undefined && ISSUING.includes(command)) keys = await deployedKeys(secret, region);
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }
  return { ...(credential ? { credential } : {}), ...(keys ? { keys } : {}) };
}

async function main(): Promise<number> {
  const parsed = parseArguments();
  if (typeof parsed === 'number') return parsed;
  const { command, table, secret, region } = parsed;
  // Also before anything starts: Java should not start for a short password, nor a user be half made without keys.
  const inputs = await inputsBeforeStart(command, secret, region);
  if (typeof inputs === 'number') return inputs;

  const endpoint = table === undefined ? process.env.DYNAMODB_ENDPOINT : undefined;
  const keysProblem = endpoint ? otherRunsKeysProblem(endpoint) : undefined;
  if (keysProblem) return refuse(keysProblem);

  let store: Store | string;
  try {
    store = await openStore(table, region, 'users CLI');
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }
  if (typeof store === 'string') {
    console.error(store);
    return 1;
  }
  try {
    const keys =
      ISSUING.includes(command) && store.credentialKeysFile ? await readCredentialKeysFile(store.credentialKeysFile) : inputs.keys;
    await runCommand(parsed, new UsersStore(createDocumentClient(store.client), store.tableName), inputs.credential, keys);
    if (store.note && command !== 'list') console.error(store.note);
    if (command === 'passwd' || command === 'remove') {
      if (store.target === 'deployed')
        console.error(`${CACHE_NOTE}\nTo make it immediate, flush the gateway's cache: aws apigateway flush-stage-authorizers-cache.`);
      else if (store.target === 'running local API') console.error(CACHE_NOTE);
    }
    return 0;
  } catch (error) {
    console.error(failureLine(parsed, error));
    return 1;
  } finally {
    await store.close();
  }
}

/** Runs the command on the store; its output is the credential (stdout) and one line of what was done (stderr). */
async function runCommand(
  { command, username, role }: Arguments,
  users: UsersStore,
  credential: { password: string; generated: boolean } | undefined,
  keys: CredentialKeys | undefined,
): Promise<void> {
  const hash = (password: string) => hashCredential(password, keys as CredentialKeys);
  switch (command) {
    case 'add': {
      const { password, generated } = credential as { password: string; generated: boolean };
      await users.putUser({ username: username as string, role: role as Role, passwordHash: hash(password) }, 'create');
      if (generated) console.log(password);
      console.error(`Added ${username} (${role})${generated ? ' with the generated password printed on standard output' : ''}.`);
      break;
    }
    case 'passwd': {
      const { password, generated } = credential as { password: string; generated: boolean };
      const existing = await users.getUser(username as string);
      if (!existing) throw new ConditionalCheckFailedException({ message: 'missing', $metadata: {} });
      await users.putUser({ ...existing, passwordHash: hash(password) }, 'replace');
      if (generated) console.log(password);
      console.error(`Changed the password of ${username}${generated ? ' to the generated one printed on standard output' : ''}.`);
      break;
    }
    case 'remove':
      await users.deleteUser(username as string);
      console.error(`Removed ${username}.`);
      break;
    case 'list':
      for (const user of await users.listUsers()) console.log(`${user.username}\t${user.role}\t${user.keyId ?? 'scrypt: migrate'}`);
      break;
    case 'migrate':
      await migrate(users, hash);
      break;
  }
}

/** A failed command in one line: a user that exists (add) or does not (passwd, remove), or the error's message. */
function failureLine({ command, username }: Arguments, error: unknown): string {
  if (!(error instanceof ConditionalCheckFailedException)) return (error as Error).message;
  return command === 'add'
    ? `User ${username} already exists.`
    : `User ${username} does not exist${command === 'passwd' ? ' (one stored by an older release is re-issued by npm run users -- migrate)' : ''}.`;
}

/**
 * Users stored by an older release (one partition, scrypt hashes, which the authorizer no longer
 * runs) get a generated credential and the new items, one user at a time; each is printed as
 * `name<TAB>password` once written. Run again after an interruption: done users are not listed again.
 */
async function migrate(users: UsersStore, hash: (password: string) => string): Promise<void> {
  const older = (await users.listUsers()).filter((user) => user.keyId === undefined);
  for (const user of older) {
    const password = generateCredential();
    await users.putUser({ username: user.username, role: user.role, passwordHash: hash(password) }, 'migrate');
    console.log(`${user.username}\t${password}`);
  }
  console.error(
    older.length === 0
      ? 'No user is stored with scrypt: nothing to migrate.'
      : `Re-issued ${older.length} user(s): give each client its new password; the old ones no longer work.`,
  );
}

process.exitCode = await main();
