/**
 * The disk's serial fsync rate: one 4 KiB write then one fsync, again and again, for about
 * `seconds`, in the directory of the database. Writes go through a 4 MiB region that is then
 * overwritten from the start, the way SQLite's WAL grows to its checkpoint size and is reused.
 * This is what one commit at a time costs; a server that commits each write on its own cannot
 * acknowledge more durable writes per second than this.
 */
import { closeSync, fdatasyncSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const PAGE = 4096;
const REGION = 4 * 1024 * 1024;

export interface SyncRate {
  /** Serial `fsync` calls per second. */
  readonly fsyncPerSecond: number;
  /** Serial `fdatasync` calls per second (what SQLite uses where available). */
  readonly fdatasyncPerSecond: number;
  /** Median time of one write + fsync, ms. */
  readonly fsyncMedianMs: number;
}

function measure(directory: string, seconds: number, sync: (fd: number) => void) {
  const path = join(directory, `fsync-probe-${process.pid}.bin`);
  const fd = openSync(path, 'w');
  const page = Buffer.alloc(PAGE, 0x5a);
  const times: number[] = [];
  try {
    const started = performance.now();
    const deadline = started + seconds * 1000;
    let offset = 0;
    for (;;) {
      const before = performance.now();
      writeSync(fd, page, 0, PAGE, offset);
      sync(fd);
      const after = performance.now();
      times.push(after - before);
      offset = (offset + PAGE) % REGION;
      if (after >= deadline) break;
    }
    const elapsed = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    return {
      perSecond: times.length / elapsed,
      medianMs: times[Math.floor(times.length / 2)] ?? 0,
    };
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

export function measureSyncRate(directory: string, seconds = 3): SyncRate {
  const fsync = measure(directory, seconds, fsyncSync);
  const fdatasync = measure(directory, seconds, fdatasyncSync);
  return {
    fsyncPerSecond: fsync.perSecond,
    fdatasyncPerSecond: fdatasync.perSecond,
    fsyncMedianMs: fsync.medianMs,
  };
}
