/** The workspace I/O resolver over a process's services (the web routes and `fleet files` share it). */
import { resolveWorkspaceIo } from '../workspace-io/resolve-workspace-io.js';
import type { WorkspaceIo } from '../workspace-io/workspace-io.js';
import { pick } from './pick.js';
import type { FleetServices } from './services.js';

export function buildWorkspaceIo(s: FleetServices): WorkspaceIo {
  return resolveWorkspaceIo(pick(s, 'addresses', 'archive', 'checkpoints', 'storeWriters', 'singleFlight', 'client', 'quota', 'config', 'providerFor'));
}
