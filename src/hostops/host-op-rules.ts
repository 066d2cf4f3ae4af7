/**
 * The rules only the serving host can check, on top of the shape (host-op-payload.ts): the
 * handle is this host's, and an importTree source is a revision of the handle's own workspace
 * under this host's archive root. The queue is internal but validated like a public one
 * (DESIGN.md "Threat model"): a payload that fails is a permanent `PayloadInvalid` and nothing
 * is touched.
 */
import { recordAt, revisionAt } from '../archive/archive-paths.js';
import { parseLocalHandle } from '../providers/local/live-paths.js';
import { ImportTreeArgs } from './host-op-args.js';
import { HostOpPayload } from './host-op-payload.js';

/** What the serving host knows about itself. */
export interface HostOpScope {
  readonly hostId: string;
  readonly archiveRoot: string;
}

// A revision of the workspace's own archive: a format 1 directory or a format 2 record (restores of both cross hosts).
const isImportSource = (archiveRoot: string, workspaceId: string, from: string) => revisionAt(archiveRoot, workspaceId, from) !== null || recordAt(archiveRoot, workspaceId, from) !== null;

/** The full rules on the host serving the queue: the shape plus this host's handle and archive. */
export function hostOpPayloadFor(scope: HostOpScope) {
  // zod runs this even when a refinement above failed: each check first needs its own field sound.
  return HostOpPayload.superRefine((payload, ctx) => {
    const parsed = 'handle' in payload && typeof payload.handle === 'string' ? parseLocalHandle(payload.handle) : null;
    if (parsed === null) return;
    if (parsed.hostId !== scope.hostId) {
      ctx.addIssue({ code: 'custom', path: ['handle'], message: `must be a handle of this host (${scope.hostId})` });
    } else if (payload.op === 'importTree' && ImportTreeArgs.safeParse(payload.args).success && !isImportSource(scope.archiveRoot, parsed.workspaceId, payload.args.from)) {
      ctx.addIssue({ code: 'custom', path: ['args', 'from'], message: `must be a revision directory or record of workspace ${parsed.workspaceId} under ${scope.archiveRoot}` });
    }
  });
}
