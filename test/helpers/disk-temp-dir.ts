import { mkdirSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** File systems that live in memory: a crash test there would prove nothing about the disk. */
const MEMORY_FILE_SYSTEMS = new Set(['tmpfs', 'ramfs']);

/**
 * The type of the file system holding `path`, from the longest matching mount point in
 * `/proc/mounts` (the last one wins when mounts are stacked); `undefined` where there is no
 * `/proc/mounts` (not Linux).
 */
export function fileSystemOf(path: string): string | undefined {
  let mounts: string;
  try {
    mounts = readFileSync('/proc/mounts', 'utf8');
  } catch {
    return undefined;
  }
  const real = realpathSync(path);
  let best: { readonly mountPoint: string; readonly type: string } | undefined;
  for (const line of mounts.split('\n')) {
    const [, escaped, type] = line.split(' ');
    if (escaped === undefined || type === undefined) continue;
    // /proc/mounts writes spaces and other specials in a mount point as octal escapes (\040).
    const mountPoint = escaped.replace(/\\([0-7]{3})/g, (_match, octal: string) =>
      String.fromCharCode(parseInt(octal, 8)),
    );
    const inside = mountPoint === '/' || real === mountPoint || real.startsWith(`${mountPoint}/`);
    if (inside && (best === undefined || mountPoint.length >= best.mountPoint.length)) {
      best = { mountPoint, type };
    }
  }
  return best?.type;
}

export interface DiskTempDir {
  readonly path: string;
  /** File system type of the directory (`unknown` off Linux). */
  readonly fileSystem: string;
}

/**
 * A fresh temporary directory on a real disk: under `os.tmpdir()` unless that is in memory
 * (tmpfs), else under the project's git-ignored `data/`. The caller removes it.
 */
export function makeDiskTempDir(prefix: string): DiskTempDir {
  let base = tmpdir();
  let fileSystem = fileSystemOf(base);
  if (fileSystem !== undefined && MEMORY_FILE_SYSTEMS.has(fileSystem)) {
    base = join(ROOT, 'data');
    mkdirSync(base, { recursive: true });
    fileSystem = fileSystemOf(base);
    if (fileSystem !== undefined && MEMORY_FILE_SYSTEMS.has(fileSystem)) {
      throw new Error(`neither ${tmpdir()} nor ${base} is on a real disk (${fileSystem})`);
    }
  }
  return { path: mkdtempSync(join(base, prefix)), fileSystem: fileSystem ?? 'unknown' };
}
