// Warms DynamoDB Local before the cold starts: it runs on a JVM, which interprets the code of a
// request type until it has served some hundreds of them and only then compiles it, so its first
// answers to a Query or a transaction take several milliseconds longer than later ones. DynamoDB
// on AWS is always warm; without this, a function whose first invocation makes a rarer request
// (the list's Query and BatchGetItem) would be charged for DynamoDB Local's JIT, not its own code.
// Sends exactly the first invocations' requests, through the raw-operations bundle.
import { readFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { RawInvocation } from '../baseline/raw-operations.ts';

const { bundle, invocationsFile } = JSON.parse(process.env.BENCH_WARM_UP_DYNAMODB ?? '{}') as { bundle: string; invocationsFile: string };
const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: (invocation: RawInvocation) => Promise<unknown> };
const invocations = JSON.parse(readFileSync(invocationsFile, 'utf8')) as RawInvocation[];
const started = performance.now();
for (const invocation of invocations) await handler(invocation);
writeSync(3, JSON.stringify({ invocations: invocations.length, seconds: (performance.now() - started) / 1000 }));
