/**
 * Base-snapshot manifest (`schemaVersion: 1`): what a base image contains and how to check it.
 *
 * Secrets never belong in a base snapshot (G8): env keys that look like secrets and values or
 * template files holding private-key material are refused with the offending key named.
 */
import { z } from 'zod';

// Env names that look like credentials.
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|PRIVATE)/i;
// Values that are credentials whatever their name: PEM private keys and well-known token shapes.
const SECRET_VALUE = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bAKIA[0-9A-Z]{16}\b/, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/, // GitHub tokens
  /\bsk-[A-Za-z0-9_-]{20,}\b/, // OpenAI-style keys
  /\bxox[abpr]-[A-Za-z0-9-]{10,}\b/, // Slack tokens
];

/** True when a string contains private-key material or a well-known token shape. */
export function looksLikeSecretValue(value: string): boolean {
  return SECRET_VALUE.some((pattern) => pattern.test(value));
}

/** True when an environment variable name looks like a credential. */
export function looksLikeSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name' });

// A path relative to the workspace root without `..` segments.
const RelativePath = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(1024, { error: 'must be at most 1024 characters' })
  .refine((p) => !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '') && !p.includes('\0'), {
    error: 'must be a relative path without "..", empty segments or NUL',
  });

const Command = z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(8_192, { error: 'is too long' });

// A template file: written into the seed before setup (`files`) or into every new workspace made
// from the base (`overlay`).
const TemplateFile = z
  .object({
    path: RelativePath,
    content: z.string({ error: 'must be a string' }).max(1_048_576, { error: 'must be at most 1 MiB' }),
    mode: z.number().int().min(0).max(0o777).default(0o644),
  })
  .strict();

export const BaseManifest = z
  .object({
    schemaVersion: z.literal(1, { error: 'must be 1' }),
    /** Human label; `version` = name + hash prefix. */
    name: z.string({ error: 'must be a string' }).regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, { error: 'must match ^[a-z0-9][a-z0-9._-]{0,62}$' }),
    /** Lane this base serves (one active base per lane). */
    lane: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must match ^[A-Za-z0-9_-]{1,64}$' }).default('default'),
    /** Runtime image (Vercel: `node22`, `python3.13`, ...; local: informative). */
    runtime: z.string({ error: 'must be a string' }).regex(/^[a-z0-9._-]{1,32}$/, { error: 'must match ^[a-z0-9._-]{1,32}$' }),
    /** System packages installed before the setup commands. */
    packages: z.array(z.string().regex(/^[a-z0-9][a-z0-9.+-]{0,127}$/, { error: 'must be a package name' })).max(500).default([]),
    /** Setup commands, run in order with `sh -c` in the workspace root. */
    setup: z.array(Command).max(200).default([]),
    /** Template files written before setup. */
    files: z.array(TemplateFile).max(1_000).default([]),
    /**
     * A small template overlay written into every new workspace made from this base, right after
     * its sandbox is created (per-workspace config, a README): at most FLEET_BASE_OVERLAY_MAX_BYTES
     * in all. A workspace whose overlay cannot be applied is `error`, never `ready`.
     */
    overlay: z.array(TemplateFile).max(1_000).default([]),
    /** Environment given to setup commands (the fleet's own environment is never passed). */
    env: z.record(EnvName, z.string().max(4_096)).default({}),
    /** Names copied from the baking process's environment (e.g. HTTP_PROXY). */
    envAllowlist: z.array(EnvName).max(100).default([]),
    /** Marker file written into the tree after setup. */
    marker: RelativePath.default('.fleet-base.json'),
    /** Smoke checks; each must exit 0 for the base to become ready (and a workspace upgraded to it). */
    smoke: z.array(Command).max(100).default([]),
    /**
     * Migration commands that bring a workspace made from an older version of this base up to
     * this one (`fleet workspace upgrade --to <version>`), run in its live tree, then the smoke checks.
     */
    migrate: z.array(Command).max(100).default([]),
  })
  .strict()
  .superRefine((manifest, ctx) => {
    for (const [name, value] of Object.entries(manifest.env)) {
      if (looksLikeSecretName(name)) ctx.addIssue({ code: 'custom', path: ['env', name], message: 'looks like a secret; secrets never enter base snapshots' });
      else if (looksLikeSecretValue(value)) ctx.addIssue({ code: 'custom', path: ['env', name], message: 'value looks like secret material' });
    }
    manifest.envAllowlist.forEach((name, i) => {
      if (looksLikeSecretName(name)) ctx.addIssue({ code: 'custom', path: ['envAllowlist', i], message: `${name} looks like a secret; secrets never enter base snapshots` });
    });
    for (const field of ['files', 'overlay'] as const) {
      manifest[field].forEach((file, i) => {
        if (looksLikeSecretValue(file.content)) ctx.addIssue({ code: 'custom', path: [field, i, 'content'], message: `${file.path} holds secret material (private key or token)` });
      });
    }
    for (const field of ['setup', 'smoke', 'migrate'] as const) {
      manifest[field].forEach((command, i) => {
        if (looksLikeSecretValue(command)) ctx.addIssue({ code: 'custom', path: [field, i], message: 'command holds secret material' });
      });
    }
  });
export type BaseManifest = z.infer<typeof BaseManifest>;
export type BaseManifestInput = z.input<typeof BaseManifest>;
export type TemplateFile = z.infer<typeof TemplateFile>;

/** Bytes of an overlay's contents (what FLEET_BASE_OVERLAY_MAX_BYTES bounds). */
export function overlayBytes(overlay: readonly TemplateFile[]): number {
  return overlay.reduce((sum, f) => sum + Buffer.byteLength(f.content), 0);
}
