// Cold starts: each bundle loaded by a fresh Node process that completes one invocation against
// DynamoDB Local, round-robin over the bundles so that background load touches them all alike,
// each function right between the two baselines it is compared with.
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LIMITS } from '../../functions/events/limits.ts';
import { keys } from '../../functions/store/table-definition.ts';
import type { RawInvocation } from '../baseline/raw-operations.ts';
import type { Window } from '../list-scaling/dataset.ts';
import { authorizerEvent, basicAuthorization, BENCH_PRINCIPAL, proxyEvent } from '../support/api-events.ts';
import { AUTHORIZER_FLOOR_NAME, FLOOR_NAME, type BenchBuild } from '../support/bench-build.ts';
import { benchCredentialKeysText } from '../support/bench-credential-keys.ts';
import { BENCH_PASSWORD, eventBody, loadEvents, sampleEvent } from '../support/bench-tables.ts';
import { runChild } from '../support/child-process.ts';
import { functionEnvironment, type BenchTables } from '../support/function-environment.ts';
import { median, medianStandardError, round } from '../support/stats.ts';

interface RunResult {
  initMs: number;
  nodeStartMs: number;
  loadMs: number;
  firstInvocationMs: number;
  cpuMs: number;
  maxRssMb: number;
  outcome: number | string;
}

export interface ColdStartResult {
  name: string;
  /** The bundle it loads (a function can be measured with more than one first request). */
  bundleName: string;
  /** floor: the brief's floor; function: a deployed bundle; same-requests: a function's DynamoDB requests alone. */
  role: 'floor' | 'function' | 'same-requests';
  runs: number;
  initMs: number;
  loadMs: number;
  firstInvocationMs: number;
  cpuMs: number;
  maxRssMb: number;
  samplesMs: number[];
  /**
   * Median over the rounds of this bundle's init divided by its floor's init in the same round:
   * pairing cancels the machine's drift between rounds, which moves both alike.
   */
  ratioToFloor: number;
  /** Bootstrap standard error of ratioToFloor (over the rounds). */
  ratioStandardError: number;
  /** For a function: the same pairing against its own DynamoDB requests sent raw (its own code's share). */
  ratioToSameRequests?: number;
  /** For a function: how many DynamoDB calls its first invocation makes (which cold-start target applies). */
  dynamoDbCalls?: number;
}

interface ColdTarget {
  name: string;
  bundleName: string;
  role: ColdStartResult['role'];
  bundle: string;
  kind: 'handler' | 'authorizer';
  event: () => unknown;
  dynamoDbCalls?: number;
}

export const sameRequestsName = (functionName: string) => `${functionName} (same requests, raw)`;

/** The update function's first invocation is a price change; this one changes the dates instead (a read, then a transaction). */
export const UPDATE_DATES = 'update-special-event (dates)';

export async function measureColdStarts(
  build: BenchBuild,
  endpoint: string,
  tables: BenchTables,
  window: Window,
  options: { runs: number; warmUpRounds: number; dynamoDbWarmUpRounds: number; logDirectory: string },
): Promise<ColdStartResult[]> {
  const rounds = options.runs + options.warmUpRounds;
  // Events the first invocations read, change and delete (a fresh one for every delete).
  const existing = sampleEvent(['2030-01-10', '2030-01-11'], 'Cold start subject');
  // Moved between two days on every run, so that each first PATCH really changes the dates.
  const moving = sampleEvent(['2030-01-20'], 'Cold start dates subject');
  const rawMoving = sampleEvent(['2030-01-20'], 'Cold start raw dates subject');
  const moves = new Map<string, number>();
  const nextDates = (eventId: string) => {
    moves.set(eventId, (moves.get(eventId) ?? 0) + 1);
    return [(moves.get(eventId) ?? 0) % 2 === 1 ? '2030-01-21' : '2030-01-20'];
  };
  const toDelete = Array.from({ length: 2 * rounds + options.dynamoDbWarmUpRounds }, () => sampleEvent(['2030-02-01', '2030-02-08']));
  await loadEvents(endpoint, tables.events, [existing, moving, rawMoving, ...toDelete]);
  let price = 0;
  const nextPrice = () => (price += 1) % 1000;
  const nextToDelete = () => (toDelete.pop() ?? existing).eventId;
  const eventForRaw = () => ({ eventId: randomUUID(), ...newEventBody() });

  const functionTarget = (name: string, dynamoDbCalls: number, event: () => unknown, bundleName = name): ColdTarget => ({
    name,
    bundleName,
    role: 'function',
    bundle: build.bundles[bundleName] as string,
    kind: name === 'authorizer' ? 'authorizer' : 'handler',
    event,
    dynamoDbCalls,
  });
  const rawTarget = (name: string, event: () => RawInvocation): ColdTarget => ({
    name: sameRequestsName(name),
    bundleName: 'raw-operations',
    role: 'same-requests',
    bundle: build.rawOperations,
    kind: 'handler',
    event,
  });
  const targets: ColdTarget[] = [
    {
      name: FLOOR_NAME,
      bundleName: FLOOR_NAME,
      role: 'floor',
      bundle: build.bundles[FLOOR_NAME] as string,
      kind: 'handler',
      event: () => ({ tableName: tables.events, key: keys.event(existing.eventId) }),
    },
    {
      name: AUTHORIZER_FLOOR_NAME,
      bundleName: AUTHORIZER_FLOOR_NAME,
      role: 'floor',
      bundle: build.bundles[AUTHORIZER_FLOOR_NAME] as string,
      kind: 'authorizer',
      event: () => ({
        tableName: tables.events,
        key: keys.user(BENCH_PRINCIPAL),
        password: BENCH_PASSWORD,
        credentialKeys: benchCredentialKeysText(),
      }),
    },
    // The number is the DynamoDB calls of that first invocation (events-store.ts).
    functionTarget('get-special-event', 1, () => proxyEvent('getSpecialEvent', { eventId: existing.eventId })),
    functionTarget('list-special-events', 2, () => proxyEvent('listSpecialEvents')),
    functionTarget('create-special-event', 1, () =>
      proxyEvent('createSpecialEvent', { body: newEventBody(), headers: { 'Idempotency-Key': randomUUID() } }),
    ),
    functionTarget('update-special-event', 1, () =>
      proxyEvent('updateSpecialEvent', { eventId: existing.eventId, body: { price: nextPrice() } }),
    ),
    functionTarget(
      UPDATE_DATES,
      2,
      () => proxyEvent('updateSpecialEvent', { eventId: moving.eventId, body: { dates: nextDates(moving.eventId) } }),
      'update-special-event',
    ),
    functionTarget('delete-special-event', 2, () => proxyEvent('deleteSpecialEvent', { eventId: nextToDelete() })),
    functionTarget('authorizer', 1, () => authorizerEvent(basicAuthorization(BENCH_PRINCIPAL, BENCH_PASSWORD))),
    rawTarget('get-special-event', () => ({ operation: 'get', table: tables.events, eventId: existing.eventId })),
    rawTarget('list-special-events', () => ({ operation: 'list', table: tables.events, ...window, limit: LIMITS.defaultListLimit })),
    rawTarget('create-special-event', () => ({
      operation: 'createIdempotently',
      table: tables.events,
      idempotencyTable: tables.idempotency,
      event: eventForRaw(),
      key: randomUUID(),
    })),
    rawTarget('update-special-event', () => ({ operation: 'update', table: tables.events, eventId: existing.eventId, price: nextPrice() })),
    rawTarget(UPDATE_DATES, () => ({
      operation: 'updateDates',
      table: tables.events,
      eventId: rawMoving.eventId,
      dates: nextDates(rawMoving.eventId),
    })),
    rawTarget('delete-special-event', () => ({ operation: 'delete', table: tables.events, eventId: nextToDelete() })),
  ];
  await warmUpDynamoDbLocal(
    build,
    functionEnvironment(endpoint, tables, 'dynamodb-warm-up'),
    targets.filter((target) => target.role === 'same-requests'),
    options.dynamoDbWarmUpRounds,
    options.logDirectory,
  );

  /** Each measured round's runs, unit by unit: the runs a ratio divides are always from one unit. */
  const unitRuns: Map<string, RunResult>[] = [];
  const units = pairedUnits(targets);

  for (let round = 0; round < rounds; round++) {
    process.stderr.write(`  cold starts: round ${round + 1}/${rounds}${round < options.warmUpRounds ? ' (warm-up)' : ''}\n`);
    // Rotate the order each round so no bundle always runs first (or right after the heaviest), and
    // reverse each unit's order every other round.
    for (const unit of units.map((_, i) => units[(i + round) % units.length] as ColdTarget[])) {
      const runs = new Map<string, RunResult>();
      for (const target of round % 2 === 0 ? unit : [...unit].reverse()) {
        const result = await runChild<RunResult>([build.coldStartRunner], {
          env: {
            ...functionEnvironment(endpoint, tables, target.name),
            BENCH_COLD_START: JSON.stringify({
              bundle: target.bundle,
              functionName: target.name,
              kind: target.kind,
              event: target.event(),
            }),
          },
          logFile: join(options.logDirectory, 'cold-starts.log'),
        });
        const succeeded = target.kind === 'authorizer' ? result.outcome === 'allowed' : [200, 201, 204].includes(Number(result.outcome));
        if (!succeeded)
          throw new Error(`The first invocation of ${target.name} did not succeed (${result.outcome}): see ${options.logDirectory}`);
        runs.set(target.name, result);
      }
      if (round >= options.warmUpRounds) unitRuns.push(runs);
    }
  }

  const runsOf = (name: string) => unitRuns.flatMap((runs) => runs.get(name) ?? []);
  /** `name`'s init over `other`'s, for every unit that ran both. */
  const pairedRatios = (name: string, other: string) =>
    unitRuns.flatMap((runs) => {
      const [run, otherRun] = [runs.get(name), runs.get(other)];
      return run && otherRun ? [run.initMs / otherRun.initMs] : [];
    });
  return targets.map((target) => {
    const runs = runsOf(target.name);
    const of = (pick: (run: RunResult) => number) => round(median(runs.map(pick)), 1);
    const toFloor = pairedRatios(target.name, floorOf(target));
    const sameRequests = targets.some((other) => other.name === sameRequestsName(target.name));
    return {
      ratioToFloor: round(median(toFloor), 3),
      ratioStandardError: round(medianStandardError(toFloor), 3),
      // The authorizer's floor (a GetItem of the user and one MAC from a bare bundle) is its own requests raw.
      ...(target.role === 'function' && (sameRequests || target.kind === 'authorizer')
        ? { ratioToSameRequests: round(median(sameRequests ? pairedRatios(target.name, sameRequestsName(target.name)) : toFloor), 3) }
        : {}),
      ...(target.dynamoDbCalls === undefined ? {} : { dynamoDbCalls: target.dynamoDbCalls }),
      name: target.name,
      bundleName: target.bundleName,
      role: target.role,
      runs: runs.length,
      initMs: of((run) => run.initMs),
      loadMs: of((run) => run.loadMs),
      firstInvocationMs: of((run) => run.firstInvocationMs),
      cpuMs: of((run) => run.cpuMs),
      maxRssMb: of((run) => run.maxRssMb),
      samplesMs: runs.map((run) => round(run.initMs, 1)),
    };
  });
}

const floorOf = (target: ColdTarget) => (target.kind === 'authorizer' ? AUTHORIZER_FLOOR_NAME : FLOOR_NAME);

/**
 * The targets grouped as they run: each function between its floor and its own requests sent raw
 * (the authorizer's floor is both), so that every ratio divides runs made side by side, which saw
 * the same moment of the machine, as bench/cold-start/paired.ts pairs its comparisons. Run
 * seconds apart, a ratio also carries whatever the machine did in between. A floor runs in
 * several units of a round.
 */
function pairedUnits(targets: ColdTarget[]): ColdTarget[][] {
  const byName = new Map(targets.map((target) => [target.name, target]));
  const units = targets
    .filter((target) => target.role === 'function')
    .map((target) =>
      [byName.get(floorOf(target)), target, byName.get(sameRequestsName(target.name))].filter((member) => member !== undefined),
    );
  const placed = new Set(units.flat());
  return [...units, ...targets.filter((target) => !placed.has(target)).map((target) => [target])];
}

/** Sends every raw target's requests `rounds` times from one process (see warm-up-dynamodb.ts). */
async function warmUpDynamoDbLocal(
  build: BenchBuild,
  env: Record<string, string>,
  rawTargets: ColdTarget[],
  rounds: number,
  logDirectory: string,
) {
  const invocationsFile = join(logDirectory, 'dynamodb-warm-up.json');
  await writeFile(invocationsFile, JSON.stringify(Array.from({ length: rounds }, () => rawTargets.map((target) => target.event())).flat()));
  const result = await runChild<{ invocations: number; seconds: number }>(['--import', 'tsx', 'bench/cold-start/warm-up-dynamodb.ts'], {
    env: { ...env, BENCH_WARM_UP_DYNAMODB: JSON.stringify({ bundle: build.rawOperations, invocationsFile }) },
    logFile: join(logDirectory, 'dynamodb-warm-up.log'),
  });
  process.stderr.write(
    `  DynamoDB Local warmed up: ${result.invocations} first-invocation request sets in ${result.seconds.toFixed(1)} s\n`,
  );
}

const newEventBody = () => eventBody('Cold start', 2030);
