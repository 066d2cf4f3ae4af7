/** The workspace I/O resolver over a process's services (the web routes and `fleet files` share it). */
import { resolveWorkspaceIo } from '../workspace-io/resolve-workspace-io.js';
import type { WorkspaceIo } from '../workspace-io/workspace-io.js';
import { pick } from './pick.js';
import type { FleetServices } from './services.js';

/** The services the resolver acts through. */
export const WORKSPACE_IO_SERVICES = ['addresses', 'archive', 'checkpoints', 'storeWriters', 'singleFlight', 'client', 'quota', 'config', 'providerFor'] as const;

export function buildWorkspaceIo(s: Pick<FleetServices, (typeof WORKSPACE_IO_SERVICES)[number]>): WorkspaceIo {
  return resolveWorkspaceIo(pick(s, ...WORKSPACE_IO_SERVICES));
}
