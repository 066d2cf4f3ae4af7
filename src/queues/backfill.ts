/** `backfill`: migrate a workspace from a legacy store into the archive, or run the sweep. */
import { z } from 'zod';
import { retryingJob } from './job-options.js';
import { WorkspaceId } from './payload.js';

export const BACKFILL = 'backfill';

export const BACKFILL_SOURCES = ['blob', 'native'] as const;

export const BackfillPayload = z.discriminatedUnion(
  'kind',
  [
    z
      .object({
        kind: z.literal('workspace'),
        workspaceId: WorkspaceId,
        source: z.enum(BACKFILL_SOURCES, { error: 'must be "blob" or "native"' }).default('blob'),
      })
      .strict(),
    z
      .object({
        kind: z.literal('sweep'),
        source: z.enum(BACKFILL_SOURCES, { error: 'must be "blob" or "native"' }).default('blob'),
        /** Workspaces handled per sweep step. */
        batch: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1).max(1_000).default(50),
        /** Maximum workspaces per second (throttle). */
        ratePerSec: z.number({ error: 'must be a number' }).positive({ error: 'must be > 0' }).max(10_000).default(20),
      })
      .strict(),
  ],
  { error: 'kind must be "workspace" or "sweep"' },
);
export type BackfillPayload = z.infer<typeof BackfillPayload>;
export type BackfillInput = z.input<typeof BackfillPayload>;

export const backfillJobOptions = retryingJob(5, 2_000);

export const backfillDeduplication = (payload: BackfillPayload) => ({
  id: payload.kind === 'workspace' ? `backfill:${payload.workspaceId}` : `backfill:sweep:${payload.source}`,
  keepLastIfActive: true,
});
