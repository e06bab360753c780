// Whether a process is alive and still the one we recorded, for the data directory's lock and
// DynamoDB Local's watchdog. Linux is read from /proc (slim images have no `ps`); `ps` is only the
// fallback for systems without /proc (macOS).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** /proc/<pid>/stat's fields after the command (which may itself hold spaces and parentheses). */
function procStat(pid: number): string[] | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return line.slice(line.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function ps(pid: number, field: string): string | undefined {
  try {
    const text = execFileSync('ps', ['-o', `${field}=`, '-p', String(pid)], {
      encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return text.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A process's start time, or undefined when there is no such process or it cannot be read: on
 * Linux `/proc/<pid>/stat` field 22 (clock ticks since boot), elsewhere `ps -o lstart`.
 */
export function processStart(pid: number): string | undefined {
  const fields = procStat(pid);
  // Fields after the command start at field 3 (the state), so field 22 is index 19.
  if (fields) return fields[19] ? `boot+${fields[19]}` : undefined;
  return ps(pid, 'lstart');
}

/** True while `pid` exists and has not exited (a zombie not yet reaped counts as exited). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procStat(pid)?.[0] ?? ps(pid, 'stat');
  // Unreadable state (no /proc, no ps) but the signal reached it: alive.
  return !state?.startsWith('Z');
}

/**
 * True when `pid` is still the very process that started at `start`. When its start time cannot be
 * read at all (no /proc and no `ps`), a live pid counts as the same process: wrongly thinking a
 * holder alive only refuses a start, wrongly thinking it dead runs two on one database.
 */
export function isSameProcess(pid: number | undefined, start: string | undefined): boolean {
  if (!pid || !isAlive(pid)) return false;
  const now = processStart(pid);
  if (now === undefined || now === start) return true;
  // A record written by an earlier version holds `ps -o lstart`.
  return Boolean(start) && !start?.startsWith('boot+') && ps(pid, 'lstart') === start;
}

/** The command line of `pid`, or '' when it cannot be read. */
export function processCommand(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    try {
      return execFileSync('ps', ['-ww', '-o', 'args=', '-p', String(pid)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return '';
    }
  }
}
