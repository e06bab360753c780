// Fair admission to a few concurrent slots. Work comes in two classes: ordinary, and suspect (its
// key failed recently); suspect work may hold only some of the slots (never the last), and starts
// only while no ordinary work is running or waiting, so it never takes CPU an ordinary one wants
// (one suspect already running finishes). Within a class, waiting keys are served round-robin, each key may hold only a few
// waiting, and nothing waits for ever. The authorizer runs its scrypt verifications through one,
// keyed by username: a flood of wrong passwords for one user (or for unknown users, who share one
// key and are always suspect) keeps its share and no more, and the login of a user with no recent
// failure waits for no flood. Written here because it is a few lines of scheduling that no
// library we use offers (p-limit and p-queue are FIFO or priority only, not per-key round-robin).

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

type WorkClass = 'ordinary' | 'suspect';

export class FairQueue {
  private readonly running: Record<WorkClass, number> = { ordinary: 0, suspect: 0 };
  /** Per class, keys in the order they are served next; a key moves to the end each time one of its waiters starts. */
  private readonly waiting: Record<WorkClass, Map<string, Waiter[]>> = { ordinary: new Map(), suspect: new Map() };
  private readonly slots: number;
  private readonly suspectSlots: number;
  private readonly maxWaitingPerKey: number;
  private readonly maxWaitMs: number;

  /** `suspectSlots` (default all but one) is clamped to 1 .. slots - 1, so one slot is always left for ordinary work (if there are two). */
  constructor(options: { slots: number; suspectSlots?: number; maxWaitingPerKey: number; maxWaitMs: number }) {
    this.slots = Math.max(1, options.slots);
    this.suspectSlots = Math.max(1, Math.min(options.suspectSlots ?? this.slots - 1, this.slots - 1));
    this.maxWaitingPerKey = options.maxWaitingPerKey;
    this.maxWaitMs = options.maxWaitMs;
  }

  /** How many are waiting (for tests and figures). */
  get queued(): number {
    let count = 0;
    for (const byKey of Object.values(this.waiting)) for (const waiters of byKey.values()) count += waiters.length;
    return count;
  }

  /** Whether run(key, …, suspect) would be refused at once (its key has as many waiting as allowed): lets a caller skip the work of preparing it. */
  isFull(key: string, suspect = false): boolean {
    return (this.waiting[suspect ? 'suspect' : 'ordinary'].get(key)?.length ?? 0) >= this.maxWaitingPerKey;
  }

  async run<T>(key: string, work: () => Promise<T>, suspect = false): Promise<T> {
    const workClass: WorkClass = suspect ? 'suspect' : 'ordinary';
    if (this.waiting[workClass].size === 0 && this.mayStart(workClass)) this.running[workClass]++;
    else await this.waitForSlot(workClass, key);
    try {
      return await work();
    } finally {
      this.running[workClass]--;
      this.startNext();
    }
  }

  private mayStart(workClass: WorkClass): boolean {
    const total = this.running.ordinary + this.running.suspect;
    if (total >= this.slots) return false;
    return workClass === 'ordinary' || this.suspectMayStart();
  }

  /** Suspect work takes only CPU no ordinary work wants: none running or waiting, and within its slots. */
  private suspectMayStart(): boolean {
    return this.running.suspect < this.suspectSlots && this.running.ordinary === 0 && this.waiting.ordinary.size === 0;
  }

  private waitForSlot(workClass: WorkClass, key: string): Promise<void> {
    const byKey = this.waiting[workClass];
    const waiters = byKey.get(key) ?? [];
    if (waiters.length >= this.maxWaitingPerKey) return Promise.reject(new QueueBusyError('Too many verifications waiting for this key'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const queue = byKey.get(key);
          const index = queue?.indexOf(waiter) ?? -1;
          if (queue && index >= 0) queue.splice(index, 1);
          if (queue?.length === 0) byKey.delete(key);
          reject(new QueueBusyError(`No verification slot within ${this.maxWaitMs} ms`));
        }, this.maxWaitMs),
      };
      waiters.push(waiter);
      byKey.set(key, waiters);
    });
  }

  /** Starts waiting work while slots allow: ordinary first, then suspect; round-robin between keys. */
  private startNext(): void {
    for (const workClass of ['ordinary', 'suspect'] as const) {
      const byKey = this.waiting[workClass];
      while (byKey.size > 0 && this.mayStartWaiting(workClass)) {
        const [key, waiters] = byKey.entries().next().value as [string, Waiter[]];
        const waiter = waiters.shift() as Waiter;
        byKey.delete(key);
        if (waiters.length > 0) byKey.set(key, waiters);
        this.running[workClass]++;
        waiter.start();
      }
    }
  }

  private mayStartWaiting(workClass: WorkClass): boolean {
    const total = this.running.ordinary + this.running.suspect;
    return total < this.slots && (workClass === 'ordinary' || this.suspectMayStart());
  }
}
