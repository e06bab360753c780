// `npm run users -- <command>`: manage API users.
//   add <name> --role editor|viewer    passwd <name>    remove <name>    list
// Passwords are read from stdin (piped) or a hidden prompt, never from arguments (they would
// land in shell history and process listings).
// Arguments and the password are checked before anything starts.
// Target: the local store (the running `npm start`'s DynamoDB Local, or .data/ directly under its
// lock), or a deployed table with `--table <name>` (AWS credentials and region from the usual AWS_* settings).
import { parseArgs } from 'node:util';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../functions/store/dynamodb-client.ts';
import { hashPassword, passwordProblem } from '../functions/auth/passwords.ts';
import { ROLES, type Role } from '../functions/routes.ts';
import { USERNAME_PATTERN, UsersStore } from '../functions/auth/users-store.ts';
import { openStore, storeSettingsProblem, type Store } from './local-store.ts';

const USAGE = `Usage: npm run users -- <command> [options]
  add <name> --role editor|viewer   create a user (password from stdin or prompt)
  passwd <name>                     set a new password (from stdin or prompt)
  remove <name>                     delete a user
  list                              list users and roles
Options:
  --table <name>    act on a deployed table (AWS credentials and region from the environment)
  --region <name>   AWS region for --table (default: AWS_REGION)`;

async function readPassword(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let input = '';
    for await (const chunk of stdin) input += String(chunk);
    return input.replace(/\r?\n$/, '');
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  let password = '';
  return new Promise((resolve, reject) => {
    stdin.on('data', (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          process.stderr.write('\n');
          resolve(password);
          return;
        }
        if (char === '\u0003') {
          stdin.setRawMode(false);
          reject(new Error('Cancelled'));
          return;
        }
        password = char === '\u007f' ? password.slice(0, -1) : password + char;
      }
    });
  });
}

async function newPassword(): Promise<string> {
  const password = await readPassword('Password: ');
  // Length, and no control or invisible format character (a NUL, a BOM from a file): passwords.ts.
  const problem = passwordProblem(password);
  if (problem) throw new Error(problem);
  if (process.stdin.isTTY && (await readPassword('Repeat password: ')) !== password) throw new Error('The passwords do not match');
  return password;
}

const COMMANDS = ['add', 'passwd', 'remove', 'list'] as const;
type Command = (typeof COMMANDS)[number];

/** How long a removed user or an old password keeps working for a client that already used it. */
const CACHE_NOTE =
  'Clients that already authenticated with the old credentials keep access for up to 6 minutes: the gateway caches the ' +
  "authorizer's answer for 300 s, the authorizer caches verified credentials for 60 s.";

/** Everything about the arguments, checked before anything starts (no Java for a typo). */
function parseArguments(): { command: Command; username?: string; role?: Role; table?: string; region?: string } | number {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { role: { type: 'string' }, table: { type: 'string' }, region: { type: 'string' }, help: { type: 'boolean' } },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, username, ...extra] = positionals;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!command || !COMMANDS.includes(command as Command)) {
    console.error(`${command ? `Unknown command ${command}.` : 'A command is required.'}\n${USAGE}`);
    return 2;
  }
  if (command === 'list' ? username !== undefined : !username || !USERNAME_PATTERN.test(username)) {
    console.error(
      command === 'list' ? `list takes no name.\n${USAGE}` : `A username (letters, digits and . _ @ -, at most 64) is required.\n${USAGE}`,
    );
    return 2;
  }
  if (extra.length > 0) {
    console.error(`Unexpected arguments: ${extra.join(' ')}\n${USAGE}`);
    return 2;
  }
  if (command === 'add' && !ROLES.includes(values.role as Role)) {
    const accepted = `${ROLES.slice(0, -1).join(', ')} or ${ROLES.at(-1)}`;
    console.error(
      `${values.role === undefined ? `add needs --role ${ROLES.join('|')}` : `--role ${values.role} is not a role: use ${accepted}`}.\n${USAGE}`,
    );
    return 2;
  }
  if (command !== 'add' && values.role !== undefined) {
    console.error(`--role applies to add only.\n${USAGE}`);
    return 2;
  }
  if (values.region !== undefined && values.table === undefined) {
    console.error(`--region applies with --table only.\n${USAGE}`);
    return 2;
  }
  const settingsProblem = values.table === undefined ? storeSettingsProblem() : undefined;
  if (settingsProblem) {
    console.error(settingsProblem);
    return 2;
  }
  return { command: command as Command, username, role: values.role as Role | undefined, table: values.table, region: values.region };
}

async function main(): Promise<number> {
  const parsed = parseArguments();
  if (typeof parsed === 'number') return parsed;
  const { command, username, role, table, region } = parsed;
  // Also before anything starts: a prompt should not wait for Java, nor Java for a short password.
  let passwordHash: string | undefined;
  try {
    if (command === 'add' || command === 'passwd') passwordHash = await hashPassword(await newPassword());
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }

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
  const users = new UsersStore(createDocumentClient(store.client), store.tableName);
  try {
    switch (command) {
      case 'add':
        await users.putUser({ username: username as string, role: role as Role, passwordHash: passwordHash as string }, 'create');
        console.log(`Added ${username} (${role}).`);
        break;
      case 'passwd': {
        const existing = await users.getUser(username as string);
        if (!existing) throw new ConditionalCheckFailedException({ message: 'missing', $metadata: {} });
        await users.putUser({ ...existing, passwordHash: passwordHash as string }, 'replace');
        console.log(`Changed the password of ${username}.`);
        break;
      }
      case 'remove':
        await users.deleteUser(username as string);
        console.log(`Removed ${username}.`);
        break;
      case 'list':
        for (const user of await users.listUsers()) console.log(`${user.username}\t${user.role}`);
        break;
    }
    if (store.note && command !== 'list') console.log(store.note);
    if (command === 'passwd' || command === 'remove') {
      if (store.target === 'running local API')
        console.log(`${CACHE_NOTE}\nTo make it immediate locally, restart npm start (its caches live in memory).`);
      if (store.target === 'deployed') {
        console.log(
          `${CACHE_NOTE}\nTo shorten it, flush the gateway's cache (aws apigateway flush-stage-authorizers-cache); the authorizer's follows within 60 s.`,
        );
      }
    }
    return 0;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      console.error(command === 'add' ? `User ${username} already exists.` : `User ${username} does not exist.`);
    } else {
      console.error((error as Error).message);
    }
    return 1;
  } finally {
    await store.close();
  }
}

process.exitCode = await main();
