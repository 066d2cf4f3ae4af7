import type { Sandbox } from '@vercel/sandbox';
import { z } from 'zod';
import type { ReadyMarker } from '../sandbox-provider.js';
import { runScript } from './run-script.js';
import { CLEAR_READY_SCRIPT } from './tree-scripts.js';
import { READY_MARKER, sandboxPath } from './vercel-paths.js';

const ReadyMarkerFile = z.object({ generation: z.number().int(), source: z.string(), readyAt: z.number() });

/** Writes the marker (outside the tree, see `vercel-paths.ts`). */
export async function markReady(sandbox: Sandbox, marker: ReadyMarker, signal: AbortSignal): Promise<void> {
  const content = Buffer.from(JSON.stringify({ generation: marker.generation, source: marker.source, readyAt: marker.readyAt }));
  await sandbox.writeFiles([{ path: sandboxPath(READY_MARKER), content, mode: 0o600 }], { signal });
}

/** The marker, or `null` when absent or unreadable (an unreadable marker does not prove readiness). */
export async function readReady(sandbox: Sandbox, signal: AbortSignal): Promise<ReadyMarker | null> {
  const content = await sandbox.readFileToBuffer({ path: sandboxPath(READY_MARKER) }, { signal });
  if (content === null) return null;
  try {
    const parsed = ReadyMarkerFile.safeParse(JSON.parse(content.toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Removes the marker (absent is fine). */
export async function clearReady(sandbox: Sandbox, signal: AbortSignal): Promise<void> {
  await runScript(sandbox, { operation: 'clearReady', script: CLEAR_READY_SCRIPT, signal });
}
