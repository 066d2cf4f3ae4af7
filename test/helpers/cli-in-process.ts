// Runs the CLI in this process (no build, no child) and collects what it prints.
import { main } from '../../src/cli/main.js';

export async function cliInProcess(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) }, env);
  return { code, stdout, stderr };
}
