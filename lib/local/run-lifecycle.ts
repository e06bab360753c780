// The life of a local run (`npm start`, local-run.ts): its start-up steps, each printed with its
// duration; what to undo on stop, last started first; and what stops it: SIGINT, SIGTERM, SIGHUP,
// the end of the process that started it, or a failure (one line and exit code 1). A stop during
// start-up aborts the step under way and waits for it, so that what it started is stopped too.
import { killStartedJavaNow } from './dynamodb-local.ts';

/**
 * Signals this close to the first are the same request to stop: a terminal's Ctrl-C reaches npm
 * and this process together (the whole foreground process group), and npm then forwards its own
 * copy. Only a signal after this window means "the stop hangs: exit now".
 */
const SAME_STOP_WINDOW_MS = 3_000;

export class RunLifecycle {
  /** Aborts the slow step (DynamoDB Local's start), so that a stop during start-up is quick. */
  readonly startUp = new AbortController();
  /** Lines printed so far: a step's "…" line is rewritten in place on a terminal only if it is still the last. */
  private linesPrinted = 0;
  /** What to undo on stop, last started first. */
  private readonly cleanups: (() => Promise<void>)[] = [];
  private stopped: Promise<void> | undefined;
  /** The start-up step under way: a stop waits for it, so that what it starts is stopped too. */
  private currentStep: Promise<unknown> | undefined;

  /** Prints a line on standard output. */
  readonly say = (line: string): void => {
    this.linesPrinted++;
    console.log(line);
  };

  /** Whether a stop has begun. */
  get stopping(): boolean {
    return this.stopped !== undefined;
  }

  /** Adds what a stop undoes (before what was added earlier). */
  onStop(cleanup: () => Promise<void>): void {
    this.cleanups.push(cleanup);
  }

  /** A one-line error and exit code 1, after stopping whatever has started. */
  async fail(message: string): Promise<never> {
    console.error(message);
    await this.stopEverything();
    process.exit(1);
  }

  /** Stops the run on SIGINT, SIGTERM and SIGHUP, and once the process that started it has exited. */
  stopOnSignals(): void {
    let firstSignalAt = 0;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.on(signal, () => {
        if (!this.stopped) {
          firstSignalAt = performance.now();
          return void this.stop(signal);
        }
        if (performance.now() - firstSignalAt < SAME_STOP_WINDOW_MS) return;
        // A later signal: exit now. The lock and the run's record go with the exit handlers; Java is
        // killed and an in-memory database removed here.
        this.say(`${signal} again: exiting at once`);
        killStartedJavaNow();
        process.exit(1);
      });
    }
    // npm forwards only SIGINT and SIGTERM; when npm itself dies (SIGHUP, kill -9) this process is
    // re-parented. Nothing of a local run should outlive what started it.
    const parentPid = process.ppid;
    setInterval(() => {
      if (process.ppid !== parentPid) void this.stop('the process that started this one has exited');
    }, 500).unref();
  }

  /** Once a stop has begun, start-up goes no further (the stop exits the process). */
  async unlessStopping(): Promise<void> {
    if (this.stopped) await new Promise<never>(() => undefined);
  }

  /** Runs one start-up step and prints it with its duration; none runs, or is printed, once a stop has begun. */
  async step<T>(name: string, action: () => Promise<T>, note: (result: T) => string = () => ''): Promise<T> {
    await this.unlessStopping();
    const started = performance.now();
    this.say(`  ${name.padEnd(15)}   …`);
    const beganAt = this.linesPrinted;
    this.currentStep = action();
    let result: T;
    try {
      result = (await this.currentStep) as T;
    } catch (error) {
      await this.unlessStopping(); // failed because the stop aborted it: not a start-up error
      throw error;
    } finally {
      this.currentStep = undefined;
    }
    await this.unlessStopping();
    const extra = note(result);
    // On a terminal the "…" line becomes the result line when nothing was printed in between.
    if (process.stdout.isTTY && this.linesPrinted === beganAt) process.stdout.write('\x1b[1A\x1b[2K');
    this.say(`  ${name.padEnd(15)} ${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s${extra ? `   ${extra}` : ''}`);
    return result;
  }

  private async stop(reason: string): Promise<void> {
    if (this.stopped) return;
    this.say(`${reason}: stopping`);
    await this.stopEverything();
    process.exit(0);
  }

  private stopEverything(): Promise<void> {
    return (this.stopped ??= (async () => {
      this.startUp.abort();
      await this.currentStep?.catch(() => undefined);
      for (const cleanup of this.cleanups.reverse())
        await cleanup().catch((error: unknown) => console.error(error instanceof Error ? error.message : error));
    })());
  }
}
