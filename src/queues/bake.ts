/** `bake`: bake a base snapshot from a manifest (dedup per manifest hash). */
import { z } from 'zod';
import { retryingJob } from './job-options.js';
import { BaseManifest } from './base-manifest.js';

export const BAKE = 'bake';

export const BakePayload = z
  .object({
    manifest: BaseManifest,
    /** Make the snapshot the active base of its lane once ready. */
    activate: z.boolean({ error: 'must be true or false' }).default(false),
    /** Provider to bake on; defaults to the fleet's `FLEET_PROVIDER`. */
    provider: z.enum(['local', 'vercel'], { error: 'must be "local" or "vercel"' }).optional(),
  })
  .strict();
export type BakePayload = z.infer<typeof BakePayload>;
export type BakeInput = z.input<typeof BakePayload>;

export const bakeJobOptions = retryingJob(2, 10_000);

/** Every bake of one manifest hash shares one job and one snapshot. */
export const bakeDedupId = (manifestHash: string) => `bake:${manifestHash}`;
