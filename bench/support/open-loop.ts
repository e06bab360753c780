// Load sent at a fixed rate whatever the answers (an open loop), for the capacity test and the
// throughput benchmark (bench/throughput/measure.ts).
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * `total` requests sent at `perSecond`, each when its time comes whether or not earlier ones have
 * answered (an open loop). It yields to the event loop before every send, even when behind: on a
 * loaded machine the overdue sends went out in one tick, and the thread that reads the answers
 * stalled for seconds (19 s measured beside stress-ng), past the server's keep-alive timeout, so
 * the known client then sent on connections the server had closed (ECONNRESET, "other side
 * closed"). Yielding, the longest stall measured there was 0.4 s.
 */
export async function atRate<T>(total: number, perSecond: number, send: (i: number) => Promise<T>): Promise<T[]> {
  const started = performance.now();
  const answers: Promise<T>[] = [];
  for (let i = 0; i < total; i++) {
    await sleep(Math.max(0, started + (i * 1000) / perSecond - performance.now()));
    answers.push(send(i));
  }
  return Promise.all(answers);
}
