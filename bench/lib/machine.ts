/** The `machine` block of every report: what the figures were measured on. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface Machine {
  readonly cpus: { readonly model: string; readonly count: number };
  readonly memory: { readonly totalMB: number; readonly freeMB: number };
  readonly loadavg: readonly number[];
  readonly os: string;
  readonly node: string;
  readonly redisServer: string;
  readonly rsync: string;
  readonly tmpFilesystem: string;
}

// First line of a tool's output, or why it could not run.
function firstLine(file: string, args: readonly string[]): string {
  try {
    return execFileSync(file, [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).split('\n')[0]!.trim();
  } catch (error) {
    return `unavailable (${(error as Error).message.split('\n')[0]})`;
  }
}

export function describeMachine(): Machine {
  const cpus = os.cpus();
  return {
    cpus: { model: cpus[0]?.model.trim() ?? 'unknown', count: cpus.length },
    memory: { totalMB: Math.round(os.totalmem() / 2 ** 20), freeMB: Math.round(os.freemem() / 2 ** 20) },
    loadavg: os.loadavg().map((l) => Number(l.toFixed(2))),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redisServer: firstLine('redis-server', ['--version']),
    rsync: firstLine('rsync', ['--version']),
    tmpFilesystem: firstLine('findmnt', ['-n', '-o', 'FSTYPE,OPTIONS', '--target', os.tmpdir()]),
  };
}
