// Property tests of every job-payload boundary (G7): 10,000 generated bad inputs per schema are
// refused with a PayloadInvalidError and nothing else. Parsing touches no disk.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BaseManifest } from '../../src/queues/base-manifest.js';
import { QUEUES, RollbackInput, type QueueName } from '../../src/queues/index.js';
import { badInputs, expectRefused, fuzzParams, hostileString, hostileValue } from '../helpers/fuzz.js';

const REVISION = 'r20261130T101530123Z-g3-k7f2q9';
const MANIFEST = {
  schemaVersion: 1,
  name: 'node-base',
  lane: 'default',
  runtime: 'node22',
  packages: ['git'],
  setup: ['npm ci'],
  files: [{ path: 'src/index.ts', content: 'export {}', mode: 0o644 }],
  env: { NODE_ENV: 'production' },
  envAllowlist: ['HTTP_PROXY'],
  marker: '.fleet-base.json',
  smoke: ['node -v'],
};

/** One complete valid payload per queue: each field present, so each can be broken. */
const VALID: Record<QueueName, Record<string, unknown>> = {
  provision: { workspaceId: 'ws-1', provider: 'local', lane: 'default', requestedBy: 'app-7' },
  persist: { workspaceId: 'ws-1', generation: 3, delete: true, reason: 'turn-end', turnId: 'turn-9', force: false, requestSeq: 4, rollbackTo: REVISION },
  checkpoint: { workspaceId: 'ws-1', generation: 3 },
  backfill: { kind: 'workspace', workspaceId: 'ws-1', source: 'blob' },
  gc: { kind: 'litter', dryRun: true, limit: 100 },
  bake: { manifest: MANIFEST, activate: true, provider: 'local' },
};

describe('fuzz: queue payload schemas refuse bad input with PayloadInvalidError only', () => {
  for (const [index, queue] of (Object.keys(VALID) as QueueName[]).entries()) {
    it(`${queue}: 10,000 bad payloads`, () => {
      const schema = QUEUES[queue].schema;
      expect(schema.safeParse(VALID[queue]).success).toBe(true);
      fc.assert(
        fc.property(badInputs(schema, VALID[queue]), (input) => {
          expectRefused(`${queue} payload`, schema, input);
        }),
        fuzzParams(1_000 + index),
      );
    });
  }

  it('backfill sweep: 10,000 bad payloads', () => {
    const schema = QUEUES.backfill.schema;
    const sweep = { kind: 'sweep', source: 'native', batch: 10, ratePerSec: 5 };
    expect(schema.safeParse(sweep).success).toBe(true);
    fc.assert(fc.property(badInputs(schema, sweep), (input) => void expectRefused('backfill payload', schema, input)), fuzzParams(1_100));
  });

  it('RollbackInput: 10,000 bad inputs', () => {
    const valid = { workspaceId: 'ws-1', revision: REVISION, generation: 2 };
    expect(RollbackInput.safeParse(valid).success).toBe(true);
    fc.assert(fc.property(badInputs(RollbackInput, valid), (input) => void expectRefused('rollback payload', RollbackInput, input)), fuzzParams(1_200));
  });
});

describe('fuzz: base manifests', () => {
  // Breaks a manifest inside: a file entry, an env entry (including secrets), a list item.
  const nestedBad = fc.oneof(
    fc.record({ key: fc.constantFrom('path', 'content', 'mode', 'extra'), value: fc.oneof(hostileValue, hostileString) }).map(({ key, value }) => ({
      ...MANIFEST,
      files: [{ ...MANIFEST.files[0], [key]: value }],
    })),
    fc.record({ name: fc.oneof(hostileString, fc.constantFrom('GITHUB_TOKEN', 'db_password', 'AWS_SECRET_ACCESS_KEY', 'api_key')), value: fc.oneof(hostileValue, fc.string()) }).map(({ name, value }) => ({
      ...MANIFEST,
      env: { [name]: value },
    })),
    fc.constantFrom('-----BEGIN RSA PRIVATE KEY-----', 'AKIAABCDEFGHIJKLMNOP', `ghp_${'a'.repeat(30)}`, `sk-${'b'.repeat(30)}`, 'xoxb-1234567890-abc').chain((secret) =>
      fc.constantFrom(
        { ...MANIFEST, env: { NODE_ENV: `x ${secret} y` } },
        { ...MANIFEST, setup: [`echo ${secret}`] },
        { ...MANIFEST, smoke: [`curl -H ${secret}`] },
        { ...MANIFEST, files: [{ path: 'key.pem', content: `${secret}\n...` }] },
      ),
    ),
    fc.record({ key: fc.constantFrom('packages', 'setup', 'envAllowlist', 'smoke'), value: fc.array(fc.oneof(hostileValue, hostileString), { minLength: 1, maxLength: 3 }) }).map(({ key, value }) => ({ ...MANIFEST, [key]: value })),
    fc.constantFrom('../x', '/etc/passwd', 'a//b', 'a/../b', 'a\0b', '').map((p) => ({ ...MANIFEST, marker: p })),
  );

  it('BaseManifest: 10,000 bad manifests', () => {
    expect(BaseManifest.safeParse(MANIFEST).success).toBe(true);
    const bad = fc.oneof(badInputs(BaseManifest, MANIFEST), nestedBad);
    fc.assert(fc.property(bad, (input) => void expectRefused('base manifest', BaseManifest, input)), fuzzParams(1_300));
  });
});
