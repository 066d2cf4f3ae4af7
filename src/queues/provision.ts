/** `provision`: ensure one live sandbox for a workspace (restore by priority, publish). */
import { z } from 'zod';
import { retryingJob } from './job-options.js';
import { ShortText, WorkspaceId } from './payload.js';

export const PROVISION = 'provision';

export const ProvisionPayload = z
  .object({
    workspaceId: WorkspaceId,
    /** Provider of a new incarnation; defaults to the fleet's `FLEET_PROVIDER`. */
    provider: z.enum(['local', 'vercel'], { error: 'must be "local" or "vercel"' }).optional(),
    /** Base-snapshot lane used only if the workspace has never had state. @default "default" */
    lane: ShortText.default('default'),
    /** Opaque caller label for logs. */
    requestedBy: ShortText.optional(),
  })
  .strict();
export type ProvisionPayload = z.infer<typeof ProvisionPayload>;

/** Result of a provision job (also what every coalesced caller receives). */
export interface ProvisionResult {
  readonly workspaceId: string;
  readonly handle: string;
  readonly generation: number;
  readonly hostId: string;
  readonly provider: 'local' | 'vercel';
  readonly outcome: 'reused' | 'resumed' | 'restored' | 'restored-native' | 'created-from-base' | 'created-empty';
  readonly source: string | null;
}

export const provisionJobOptions = retryingJob(5, 1_000);

/** Every caller for one workspace shares the in-flight job and its result. */
export const provisionDedupId = (workspaceId: string) => `provision:${workspaceId}`;
