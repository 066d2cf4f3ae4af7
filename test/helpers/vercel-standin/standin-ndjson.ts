// NDJSON command streams (reference §8): content-type exactly `application/x-ndjson`, headers and
// the first line sent at once, then log lines as they happen, then the finished command (sync
// runs) or an error line when the session stopped under the command.
import type { ServerResponse } from 'node:http';
import { commandJson, type LogLine, type StandinCommand } from './standin-command.js';

function writeLine(res: ServerResponse, value: unknown): void {
  res.write(`${JSON.stringify(value)}\n`);
}

/** Streams a command's logs (replay + live) and, when `withCommand`, the command lines around them. */
export function streamCommand(res: ServerResponse, command: StandinCommand, withCommand: boolean): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  if (withCommand) writeLine(res, { command: { ...commandJson(command), exitCode: null } });
  const finish = () => {
    if (command.interruptedBy !== undefined) {
      writeLine(res, { stream: 'error', data: { code: command.interruptedBy, message: 'The sandbox stopped while the command was running' } });
    } else if (withCommand) {
      writeLine(res, { command: commandJson(command) });
    }
    res.end();
  };
  for (const line of command.logs) writeLine(res, line);
  if (command.exitCode !== null) {
    finish();
    return;
  }
  const listener = (line: LogLine | null) => {
    if (line !== null) {
      writeLine(res, line);
      return;
    }
    command.listeners.delete(listener);
    finish();
  };
  command.listeners.add(listener);
  res.on('close', () => command.listeners.delete(listener));
}
