import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The Debian/Ubuntu package that provides each server binary we run locally. */
export const PACKAGE_OF = {
  'redis-server': 'redis-server',
  influxd: 'influxdb',
  nginx: 'nginx-light',
} as const;

/** A server binary this package runs. */
export type ServerBinary = keyof typeof PACKAGE_OF;

/** The install line printed when binaries are missing. */
export const INSTALL_HINT = 'apt-get install redis-server influxdb nginx-light';

/** Thrown when a server binary is not installed; `missing` lists the binaries. */
export class MissingBinaryError extends Error {
  override readonly name = 'MissingBinaryError';
  readonly missing: readonly ServerBinary[];
  constructor(missing: readonly ServerBinary[]) {
    const pkgs = missing.map((b) => PACKAGE_OF[b]).join(' ');
    super(
      `${missing.join(', ')} not found on PATH (or /usr/sbin). Install with: ` +
        `sudo apt-get install -y ${pkgs}  (all three: ${INSTALL_HINT}), ` +
        `or set REDIS_URL / INFLUX_URL to servers you run yourself.`,
    );
    this.missing = missing;
  }
}

/** True when `err` is a {@link MissingBinaryError}. */
export function isMissingBinaryError(err: unknown): err is MissingBinaryError {
  return err instanceof MissingBinaryError;
}

// Debian puts nginx in /usr/sbin, which a non-root PATH often lacks.
const EXTRA_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** The absolute path of `name` on PATH (plus the sbin directories), or `undefined`. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), ...EXTRA_DIRS].filter(Boolean);
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Resolves every binary to its path. @throws {MissingBinaryError} naming every one missing. */
export function requireBinaries<B extends ServerBinary>(names: readonly B[]): Record<B, string> {
  const found = {} as Record<B, string>;
  const missing: B[] = [];
  for (const name of names) {
    const path = findBinary(name);
    if (path) found[name] = path;
    else missing.push(name);
  }
  if (missing.length > 0) throw new MissingBinaryError(missing);
  return found;
}
