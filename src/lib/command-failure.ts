/** How a failed command reads in an error: what failed, its exit (or signal, or timeout), the command and the last lines of its output. */
export interface CommandOutcome {
  readonly exitCode: number | null;
  readonly signal?: string | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** The message of a step whose command failed, or null when it succeeded (exit 0, in time). */
export function commandFailure(step: string, command: string, result: CommandOutcome, tailLines = 5): string | null {
  if (result.exitCode === 0 && !result.timedOut) return null;
  const tail = (result.stderr || result.stdout).trim().split('\n').slice(-tailLines).join(' | ');
  return `${step} failed (exit ${result.exitCode ?? result.signal}${result.timedOut ? ', timed out' : ''}): ${command}${tail ? ` → ${tail}` : ''}`;
}
