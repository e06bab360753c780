// A bound on the in-memory database. DynamoDB Local listens on every interface and keeps one
// database file per access key id: a client with any other key id cannot see this run's data,
// but it can write files of its own, and in /dev/shm that is the machine's memory (5 MB/s were
// observed). DynamoDB Local has no quota option and a tmpfs of a fixed size needs root, so the
// local API measures the directory and stops the run, with a message, when it passes the bound.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** MUSEUM_IN_MEMORY_MAX_MB, default 256 MB: far more than any local use (10,000 events are ~10 MB). */
export function inMemoryLimitBytes(): number {
  const megabytes = Number(process.env.MUSEUM_IN_MEMORY_MAX_MB ?? 256);
  if (!Number.isFinite(megabytes) || megabytes <= 0)
    throw new Error(`MUSEUM_IN_MEMORY_MAX_MB must be a positive number of megabytes, not ${process.env.MUSEUM_IN_MEMORY_MAX_MB}`);
  return Math.round(megabytes * 1024 * 1024);
}

/** The bytes the files under `directory` occupy (allocated blocks: what tmpfs takes from memory). */
export function directoryBytes(directory: string): number {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(directory, { recursive: true, withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    try {
      const stat = statSync(join(entry.parentPath, entry.name));
      total += Math.max(stat.size, stat.blocks * 512);
    } catch {
      // removed meanwhile
    }
  }
  return total;
}

/**
 * Checks `directory` every `intervalMs` and calls `overflow` once when it holds more than
 * `maxBytes`. Returns the function that stops watching. The timer does not keep Node alive.
 */
export function watchDirectorySize(directory: string, maxBytes: number, overflow: (bytes: number) => void, intervalMs = 1_000): () => void {
  const timer = setInterval(() => {
    const bytes = directoryBytes(directory);
    if (bytes <= maxBytes) return;
    clearInterval(timer);
    overflow(bytes);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
