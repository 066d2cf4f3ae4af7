/** `gc`: bounded, logged collection of one kind of garbage, or a dry run of it. */
import { z } from 'zod';
import { retryingJob } from './job-options.js';

export const GC = 'gc';

/** In the order `fleet gc` runs them: revisions first, then the objects only they held. `verify` is a check, not a collection. */
export const GC_KINDS = ['unattached', 'retention', 'litter', 'objects', 'bases', 'orphans', 'idle', 'verify'] as const;
export type GcKind = (typeof GC_KINDS)[number];

/** Upper bound of one batch (seed 003: collection is at most 1000 a batch). */
export const GC_MAX_BATCH = 1_000;

export const GcPayload = z
  .object({
    kind: z.enum(GC_KINDS, { error: `must be one of ${GC_KINDS.join(', ')}` }),
    dryRun: z.boolean({ error: 'must be true or false' }).default(false),
    limit: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be >= 1' })
      .max(GC_MAX_BATCH, { error: `must be <= ${GC_MAX_BATCH}` })
      .default(GC_MAX_BATCH),
  })
  .strict();
export type GcPayload = z.infer<typeof GcPayload>;
export type GcInput = z.input<typeof GcPayload>;

export const gcJobOptions = retryingJob(3, 5_000);

/** Dry runs never coalesce with real runs (a real request must not turn into a dry one). */
export const gcDedupId = (payload: GcPayload) => `gc:${payload.kind}${payload.dryRun ? ':dry-run' : ''}`;
