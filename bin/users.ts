// `npm run users -- <command>`: manage API users.
//   add <name> --role editor|viewer    passwd <name>    remove <name>    list
// Passwords are read from stdin (piped) or a hidden prompt, never from arguments (they would
// land in shell history and process listings).
// Target: the local store (the running `npm start`'s DynamoDB Local, or .data/ directly), or a
// deployed table with `--table <name>` (AWS credentials and region from the usual AWS_* settings).
import { parseArgs } from 'node:util';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../functions/shared/dynamodb-client.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../functions/shared/passwords.ts';
import { ROLES, type Role } from '../functions/shared/routes.ts';
import { USERNAME_PATTERN, UsersStore } from '../functions/shared/users-store.ts';
import { ensureLocalTables, localClient } from '../lib/local/dynamodb-local.ts';
import { localDynamoDb, localTableNames, runningLocalApi } from '../lib/local/local-environment.ts';

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
    for await (const chunk of stdin) input += chunk;
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
  if ([...password].length < MIN_PASSWORD_LENGTH) throw new Error(`The password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (process.stdin.isTTY && (await readPassword('Repeat password: ')) !== password) throw new Error('The passwords do not match');
  return password;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { role: { type: 'string' }, table: { type: 'string' }, region: { type: 'string' }, help: { type: 'boolean' } },
  });
  const [command, username] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  if (command !== 'list' && (!username || !USERNAME_PATTERN.test(username))) {
    console.error(`A username (letters, digits and . _ @ -, at most 64) is required.\n${USAGE}`);
    return 2;
  }

  let stopLocal: (() => Promise<void>) | undefined;
  let tableName: string;
  let client: DynamoDBClient;
  if (values.table) {
    tableName = values.table;
    client = new DynamoDBClient(values.region ? { region: values.region } : {});
  } else {
    const running = await runningLocalApi();
    const dynamodb = running ? { endpoint: running.dynamodbEndpoint, started: undefined } : await localDynamoDb();
    stopLocal = dynamodb.started?.stop;
    await ensureLocalTables(dynamodb.endpoint, localTableNames);
    tableName = localTableNames.events;
    client = localClient(dynamodb.endpoint);
  }
  const users = new UsersStore(createDocumentClient(client), tableName);
  try {
    switch (command) {
      case 'add': {
        const role = values.role as Role;
        if (!ROLES.includes(role)) throw new Error(`--role must be one of: ${ROLES.join(', ')}`);
        await users.putUser({ username: username as string, role, passwordHash: await hashPassword(await newPassword()) }, 'create');
        console.log(`Added ${username} (${role}).`);
        break;
      }
      case 'passwd': {
        const existing = await users.getUser(username as string);
        if (!existing) throw new ConditionalCheckFailedException({ message: 'missing', $metadata: {} });
        await users.putUser({ ...existing, passwordHash: await hashPassword(await newPassword()) }, 'replace');
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
      default:
        console.error(`Unknown command ${command}.\n${USAGE}`);
        return 2;
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
    client.destroy();
    await stopLocal?.();
  }
}

process.exitCode = await main();
