// Fair admission to a few concurrent slots: waiting work is served round-robin between keys, each
// key may hold only a few waiting, and nothing waits for ever. The authorizer runs its scrypt
// verifications through one, keyed by username, so that a flood of wrong passwords for one user
// (or for unknown users, who share one key) takes its share of the CPU and no more: a login of any
// other user is next in line. Written here because it is twenty lines of scheduling that no
// library we use offers with per-key round-robin (p-limit and p-queue are FIFO or priority only).

/** The work was not started: its key had too many waiting, or no slot freed up in time. */
export class QueueBusyError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'QueueBusyError';
  }
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

export class FairQueue {
  private running = 0;
  /** Keys in the order they are served next; a key is moved to the end each time one of its waiters starts. */
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly slots: number;
  private readonly maxWaitingPerKey: number;
  private readonly maxWaitMs: number;

  constructor(options: { slots: number; maxWaitingPerKey: number; maxWaitMs: number }) {
    this.slots = Math.max(1, options.slots);
    this.maxWaitingPerKey = options.maxWaitingPerKey;
    this.maxWaitMs = options.maxWaitMs;
  }

  /** How many are waiting (for tests and figures). */
  get queued(): number {
    let count = 0;
    for (const waiters of this.waiting.values()) count += waiters.length;
    return count;
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    if (this.running >= this.slots || this.waiting.size > 0) await this.waitForSlot(key);
    else this.running++;
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private waitForSlot(key: string): Promise<void> {
    const waiters = this.waiting.get(key) ?? [];
    if (waiters.length >= this.maxWaitingPerKey) return Promise.reject(new QueueBusyError('Too many verifications waiting for this key'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const queue = this.waiting.get(key);
          const index = queue?.indexOf(waiter) ?? -1;
          if (queue && index >= 0) queue.splice(index, 1);
          if (queue?.length === 0) this.waiting.delete(key);
          reject(new QueueBusyError(`No verification slot within ${this.maxWaitMs} ms`));
        }, this.maxWaitMs),
      };
      waiters.push(waiter);
      this.waiting.set(key, waiters);
    });
  }

  /** The slot passes straight to the next key's oldest waiter (round-robin), or is freed. */
  private release(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.running--;
      return;
    }
    const [key, waiters] = next.value;
    const waiter = waiters.shift() as Waiter;
    this.waiting.delete(key);
    if (waiters.length > 0) this.waiting.set(key, waiters);
    waiter.start();
  }
}
