/**
 * Run-time check of the system tools the fleet shells out to. Installation lives in one place,
 * `scripts/ensure-system-tools.mjs` (run by `npm start` / `npm test`); this only explains.
 */
import { spawnSync } from 'node:child_process';
import { FleetError } from './errors/fleet-error.js';

/** Thrown when `redis-server` or `rsync` is not on PATH. */
export class MissingSystemToolError extends FleetError {
  readonly code = 'MissingSystemTool';
  readonly retryable = false;

  constructor(tools: readonly string[]) {
    const apt = tools.map((t) => (t === 'redis-server' ? 'redis-server' : t)).join(' ');
    const brew = tools.map((t) => (t === 'redis-server' ? 'redis' : t)).join(' ');
    super(
      `missing system tools: ${tools.join(', ')}; install with \`apt-get install -y ${apt}\` or \`brew install ${brew}\` ` +
        '(or run `node scripts/ensure-system-tools.mjs` as root)',
      { context: { tools } },
    );
  }
}

// True when `bin` resolves on PATH.
function onPath(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
}

/** Throws `MissingSystemToolError` naming every missing tool. */
export function assertSystemTools(tools: readonly string[]): void {
  const missing = tools.filter((tool) => !onPath(tool));
  if (missing.length > 0) throw new MissingSystemToolError(missing);
}
