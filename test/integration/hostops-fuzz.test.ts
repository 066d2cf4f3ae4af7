// Fuzz of every hostops operation (issue 12): hostile arguments (`..`, `.`, absolute paths,
// `../../x`, NUL, another workspace's revision, a foreign host's handle, non-array commands,
// huge and fractional numbers, wrong types, unknown keys) go through the REAL hostops processor
// wired to a real LocalProvider over temporary roots. Every one is refused with a permanent
// PayloadInvalid, and the fleet home and a sentinel directory outside it are byte-identical
// afterwards. The provider's own entry guards are fuzzed the same way.
import path from 'node:path';
import fc from 'fast-check';
import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { archivePaths, revisionAt } from '../../src/archive/archive-paths.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { parseLocalHandle } from '../../src/providers/local/live-paths.js';
import { checkRelativePath } from '../../src/providers/local/safe-path.js';
import { HOST_OPS, type HostOp } from '../../src/hostops/host-op-payload.js';
import { hostOpPayloadFor } from '../../src/hostops/host-op-rules.js';
import { SNAPSHOT_ID_PATTERN, WORKSPACE_ID_PATTERN } from '../../src/queues/payload.js';
import { badInputs, expectPayloadInvalid, hostileString, hostileValue } from '../helpers/fuzz.js';
import { BASE, VICTIM_REVISION, WS_REVISION, hostopsHost, type HostopsHost } from '../helpers/hostops-host.js';

/** Hostile payloads per operation: each goes to disk-facing code, so fewer than the pure fuzzers. */
const RUNS = 2_000;
const params = (seed: number) => ({ numRuns: RUNS, seed, endOnFailure: true });

// Values of the wrong type for any field (never `undefined`: leaving an optional field out is fine).
const wrongType: fc.Arbitrary<unknown> = hostileValue.filter((v) => v !== undefined && typeof v !== 'string');
const relativeOk = (s: string) => {
  try {
    checkRelativePath('path', s);
    return true;
  } catch {
    return false;
  }
};
const TRAVERSAL = ['.', '..', '../x', '../../x', '../../../etc/passwd', '/etc/passwd', '/', 'a/../b', 'a/./b', 'a//b', 'a/', '', 'a\0b', '\0', 'x'.repeat(256), `${'a/'.repeat(2_100)}b`];
const badPath = fc.oneof(fc.constantFrom(...TRAVERSAL), hostileString.filter((s) => !relativeOk(s)), wrongType);
const idStrings = ['.', '..', '../x', '../../x', 'a/b', '/abs', '', 'a\0b', ' ', '.hidden', 'x'.repeat(201), '..\\..', 'ws/../..'];
const badId = (pattern: RegExp) => fc.oneof(fc.constantFrom(...idStrings.filter((s) => !pattern.test(s))), hostileString.filter((s) => !pattern.test(s)), wrongType);
const badSnapshotId = badId(SNAPSHOT_ID_PATTERN);
const badWorkspaceId = badId(WORKSPACE_ID_PATTERN);
const badWhole = (min: number, max: number) =>
  fc.oneof(fc.constantFrom(min - 1, -1, 0.5, min + 0.5, Number.NaN, Infinity, -Infinity, max + 1, 1e308, 2 ** 53), fc.double().filter((d) => !Number.isInteger(d) || d < min || d > max), wrongType.filter((v) => typeof v !== 'number'));
const badEnv = fc.oneof(
  fc.constantFrom<unknown>({ 'A=B': 'x' }, { '': 'x' }, { '1A': 'x' }, { 'A B': 'x' }, { A: 1 }, { A: 'a\0b' }, { A: null }, 'PATH=/x', [], [['A', 'b']], Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`V${i}`, 'x']))),
  fc.dictionary(hostileString.filter((k) => !/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(k) && k !== '__proto__'), fc.string(), { minKeys: 1, maxKeys: 3 }),
  wrongType.filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
);
const badCmd = fc.oneof(
  fc.constantFrom<unknown>('touch pwned', 'rm -rf /', '', [], [''], [1], ['sh', 1], [null], { 0: 'sh', length: 1 }, ['a\0b'], ['sh', '-c', 'x\0'], Array(4_097).fill('x'), ['x'.repeat(131_073)], Array(20).fill('y'.repeat(120_000))),
  fc.array(wrongType, { minLength: 1, maxLength: 3 }),
  wrongType.filter((v) => !Array.isArray(v)),
);
const badHandle = fc.oneof(
  fc.constantFrom('local:other-host:ws:g1', 'local:local:..:g1', 'local:local:.:g1', 'local:local:ws:g1/../x', 'local:local:ws', 'local:local:ws:g', 'local:local:ws:g1 ', '../x', '', 'x'.repeat(600)),
  hostileString.filter((s) => parseLocalHandle(s)?.hostId !== 'local'),
  wrongType,
);
const badArgsObject = fc.oneof(wrongType.filter((v) => v === null || typeof v !== 'object'), fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }).filter((k) => k !== '__proto__'), hostileValue, { minKeys: 1, maxKeys: 3 }));

// Sets `value` at a dotted path of a copy of `payload` (own properties only, even `__proto__`).
function withValue(payload: Record<string, unknown>, dotted: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(payload);
  const keys = dotted.split('.');
  let node = copy as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (value === undefined) delete node[last];
  else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

interface OpCase {
  readonly valid: Record<string, unknown>;
  /** Field (dotted path) → values that must be refused there. */
  readonly fields: Record<string, fc.Arbitrary<unknown>>;
}

function cases(h: HostopsHost): Record<HostOp, OpCase> {
  const { archiveRoot, snapshotRoot } = h.config.paths;
  const own = archivePaths(archiveRoot, 'ws');
  const badFrom = fc.oneof(
    fc.constantFrom(
      h.sentinel,
      path.join(h.sentinel, 'revs', WS_REVISION),
      '/',
      '/etc',
      h.home,
      archiveRoot,
      archivePaths(archiveRoot, 'victim').revision(VICTIM_REVISION),
      `${own.revs}/../../victim/revs/${VICTIM_REVISION}`,
      `${own.revs}/./${WS_REVISION}`,
      own.tmp(WS_REVISION),
      `${own.revision(WS_REVISION)}/`,
      `${own.revision(WS_REVISION)}\0`,
      own.dir,
      own.current,
      path.join(snapshotRoot, BASE, 'tree'),
      // Through `..` by text (path.join would normalise it into the real revision).
      `${snapshotRoot}/../archive/ws/revs/${WS_REVISION}`,
      `archive/ws/revs/${WS_REVISION}`,
      WS_REVISION,
      '../../x',
      '',
    ),
    hostileString.filter((s) => revisionAt(archiveRoot, 'ws', s) === null),
    fc.string({ unit: fc.constantFrom('a', '/', '.', 'revs', 'ws', 'victim', WS_REVISION), maxLength: 12 }).map((s) => path.join(archiveRoot, s)).filter((s) => revisionAt(archiveRoot, 'ws', s) === null),
    wrongType,
  );
  const handle = h.handle;
  const noArgs = (op: HostOp): OpCase => ({ valid: { op, handle, args: {} }, fields: { handle: badHandle, args: badArgsObject } });
  return {
    create: {
      valid: { op: 'create', args: { workspaceId: 'fuzz-ws', generation: 1, source: { type: 'base-snapshot', snapshotId: BASE }, env: { A: 'b' } } },
      fields: {
        'args.workspaceId': badWorkspaceId,
        'args.generation': badWhole(1, Number.MAX_SAFE_INTEGER),
        'args.source': fc.oneof(
          fc.constantFrom<unknown>({ type: 'empty', snapshotId: 'x' }, { type: 'host', path: '/' }, { type: 'base-snapshot' }, 'empty', { type: 'workspace-snapshot', snapshotId: '../../x' }),
          badSnapshotId.map((snapshotId) => ({ type: 'base-snapshot', snapshotId })),
          wrongType,
        ),
        'args.source.snapshotId': badSnapshotId,
        'args.env': badEnv,
        handle: fc.constant(handle),
      },
    },
    get: noArgs('get'),
    resume: noArgs('resume'),
    list: { valid: { op: 'list', args: {} }, fields: { handle: fc.constant(handle), args: badArgsObject } },
    readReady: noArgs('readReady'),
    clearReady: noArgs('clearReady'),
    stop: noArgs('stop'),
    destroy: noArgs('destroy'),
    exec: {
      valid: { op: 'exec', handle, args: { cmd: ['touch', 'pwned'], cwd: 'sub', env: { A: 'b' }, timeoutMs: 1_000 } },
      fields: { handle: badHandle, 'args.cmd': badCmd, 'args.cwd': badPath, 'args.env': badEnv, 'args.timeoutMs': badWhole(1, 86_400_000) },
    },
    writeFiles: {
      valid: { op: 'writeFiles', handle, args: { files: [{ path: 'pwned.txt', content: 'aGk=', mode: 0o644 }] } },
      fields: {
        handle: badHandle,
        'args.files': fc.oneof(wrongType.filter((v) => !Array.isArray(v)), fc.array(wrongType, { minLength: 1, maxLength: 2 })),
        'args.files.0.path': badPath,
        'args.files.0.content': fc.oneof(fc.constantFrom('not base64!', 'abc', 'aGk', '====', 'aG\0k', 'aGk=\n'), wrongType),
        'args.files.0.mode': badWhole(0, 0o7777),
        'args.files.0.owner': fc.constantFrom('root', 0),
      },
    },
    readFile: { valid: { op: 'readFile', handle, args: { path: 'notes.txt' } }, fields: { handle: badHandle, 'args.path': badPath } },
    importTree: { valid: { op: 'importTree', handle, args: { from: own.revision(WS_REVISION) } }, fields: { handle: badHandle, 'args.from': badFrom } },
    markReady: {
      valid: { op: 'markReady', handle, args: { marker: { generation: 1, source: WS_REVISION, readyAt: 1 } } },
      fields: {
        handle: badHandle,
        'args.marker': fc.oneof(fc.constantFrom<unknown>({}, { generation: 1 }, 'ready'), wrongType),
        'args.marker.generation': badWhole(1, Number.MAX_SAFE_INTEGER),
        'args.marker.source': badId(SNAPSHOT_ID_PATTERN),
        'args.marker.readyAt': badWhole(0, Number.MAX_SAFE_INTEGER),
        'args.marker.extra': fc.constant(1),
      },
    },
    snapshot: { valid: { op: 'snapshot', handle, args: { expirationMs: 0 } }, fields: { handle: badHandle, 'args.expirationMs': badWhole(0, Number.MAX_SAFE_INTEGER) } },
    snapshotStatus: { valid: { op: 'snapshotStatus', args: { snapshotId: BASE } }, fields: { 'args.snapshotId': badSnapshotId, handle: fc.constant(handle), args: badArgsObject } },
    deleteSnapshot: { valid: { op: 'deleteSnapshot', args: { snapshotId: BASE } }, fields: { 'args.snapshotId': badSnapshotId, handle: fc.constant(handle), args: badArgsObject } },
  };
}

// Payloads that must be refused: one field made hostile, a required field left out, an unknown
// key at the top or in `args`, or a wrong `op`.
function hostilePayloads(spec: OpCase, schema: z.ZodType): fc.Arbitrary<unknown> {
  const fields = Object.entries(spec.fields);
  const topKeys = Object.keys(spec.valid).filter((k) => k !== 'op' && !schema.safeParse(withValue(spec.valid, k, undefined)).success);
  return fc.oneof(
    fc.constantFrom(...fields).chain(([field, values]) => values.map((value) => withValue(spec.valid, field, value))),
    ...(topKeys.length > 0 ? [fc.constantFrom(...topKeys).map((key) => withValue(spec.valid, key, undefined))] : []),
    fc.constantFrom('extra', '__proto__', 'constructor', 'signal').map((key) => withValue(spec.valid, key, 1)),
    fc.constantFrom('op').chain((key) => fc.oneof(hostileString.filter((s) => !(HOST_OPS as readonly string[]).includes(s)), wrongType).map((value) => withValue(spec.valid, key, value))),
    hostileValue.filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
  );
}

// Runs one payload and returns the refusal (a payload that succeeds fails the property).
async function refusal(h: HostopsHost, payload: unknown): Promise<PayloadInvalidError> {
  let caught: unknown;
  try {
    await h.run(payload);
  } catch (error) {
    caught = error;
  }
  const invalid = expectPayloadInvalid(caught, () => `hostops accepted ${fc.stringify(payload).slice(0, 300)}`);
  if (invalid.retryable) throw new Error('a refusal must be permanent');
  return invalid;
}

// A fresh host (the test's temporary directories go when it ends), its cases and its rules.
async function setup() {
  const h = await hostopsHost();
  return { h, before: await h.trees(), specs: cases(h), schema: hostOpPayloadFor({ hostId: h.config.hostId, archiveRoot: h.config.paths.archiveRoot }) };
}

describe('fuzz: every hostops operation refuses hostile arguments and touches nothing', () => {
  it('covers every operation, and each valid example passes the rules', async () => {
    const { specs, schema } = await setup();
    expect(Object.keys(specs).sort()).toEqual([...HOST_OPS].sort());
    for (const spec of Object.values(specs)) expect(schema.safeParse(spec.valid).error?.issues ?? []).toEqual([]);
  });

  for (const [index, op] of HOST_OPS.entries()) {
    it(`${op}: ${RUNS} hostile payloads, each a permanent PayloadInvalid; home and sentinel unchanged`, async () => {
      const { h, before, specs, schema } = await setup();
      await fc.assert(
        fc.asyncProperty(hostilePayloads(specs[op], schema), async (payload) => {
          await refusal(h, payload);
        }),
        params(4_000 + index),
      );
      // Random breakage around the valid example (badInputs): whatever the rules refuse is refused by the processor.
      await fc.assert(
        fc.asyncProperty(badInputs(schema, specs[op].valid), async (payload) => {
          fc.pre(!schema.safeParse(payload).success);
          await refusal(h, payload);
        }),
        params(4_100 + index),
      );
      expect(await h.trees()).toEqual(before);
    });
  }

  it(`the provider's own guards: ${RUNS} hostile snapshot ids, workspace ids and importTree sources`, async () => {
    const { h, before } = await setup();
    const { archiveRoot } = h.config.paths;
    const signal = AbortSignal.timeout(120_000);
    const attack = fc.oneof(
      badSnapshotId.filter((v) => typeof v === 'string').map((id) => () => h.local.deleteSnapshot(id as string)),
      badWorkspaceId.filter((v) => typeof v === 'string').map((id) => () => h.local.create({ workspaceId: id as string, generation: 1, source: { type: 'empty' }, signal })),
      badSnapshotId.filter((v) => typeof v === 'string').map((id) => () => h.local.create({ workspaceId: 'fuzz-ws', generation: 1, source: { type: 'base-snapshot', snapshotId: id as string }, signal })),
      hostileString.filter((s) => revisionAt(archiveRoot, 'ws', s) === null).map((from) => () => h.local.importTree(h.handle, from, signal)),
    );
    await fc.assert(
      fc.asyncProperty(attack, async (call) => {
        let caught: unknown;
        await call().catch((error: unknown) => {
          caught = error;
        });
        expectPayloadInvalid(caught, 'the provider accepted a hostile id');
      }),
      params(4_200),
    );
    expect(await h.trees()).toEqual(before);
  });

  it('valid snapshot ids are one path segment below the snapshot root', () => {
    const goodIds = fc.tuple(fc.constantFrom(...'abcXYZ019'), fc.string({ unit: fc.constantFrom(...'abcXYZ019_.-'), maxLength: 199 })).map(([a, b]) => a + b);
    fc.assert(
      fc.property(goodIds, (id) => {
        expect(SNAPSHOT_ID_PATTERN.test(id)).toBe(true);
        expect(path.join('/snapshots', id)).toBe(`/snapshots/${id}`);
      }),
      { numRuns: RUNS, seed: 4_300 },
    );
  });
});
