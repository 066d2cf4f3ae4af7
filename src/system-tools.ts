/**
 * Run-time check of the system tools the fleet shells out to. Installation lives in one place,
 * `scripts/ensure-system-tools.mjs` (run by `npm start` / `npm test`); this only explains.
 */
import { FleetError } from './errors/fleet-error.js';
import { runCommand } from './lib/run-command.js';

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

// A `command -v` that has not answered in this long is a broken shell, not a missing tool.
const LOOKUP_TIMEOUT_MS = 10_000;

// True when `bin` resolves on `systemPath`.
async function onPath(bin: string, systemPath: string): Promise<boolean> {
  const result = await runCommand('sh', ['-c', `command -v ${bin}`], { env: { PATH: systemPath }, timeoutMs: LOOKUP_TIMEOUT_MS });
  return result.exitCode === 0;
}

/** Throws `MissingSystemToolError` naming every tool missing from `systemPath` (the PATH the fleet runs its tools with). */
export async function assertSystemTools(tools: readonly string[], systemPath: string): Promise<void> {
  const missing: string[] = [];
  for (const tool of tools) if (!(await onPath(tool, systemPath))) missing.push(tool);
  if (missing.length > 0) throw new MissingSystemToolError(missing);
}
