// The failure wire: every fleet error class round-trips through `failedReason` with its code,
// message, retry intent and context; old, foreign and broken reasons decode to a RemoteJobError.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ReplyError } from 'ioredis';
import { BackfillDeferredError } from '../../src/errors/backfill-deferred-error.js';
import { BakeFailedError } from '../../src/errors/bake-failed-error.js';
import { MAX_CONTEXT_JSON, MAX_CONTEXT_STRING, boundContext } from '../../src/errors/bound-context.js';
import { ChecksumMismatchError } from '../../src/errors/checksum-mismatch-error.js';
import { ConfigError } from '../../src/errors/config-error.js';
import { CrossDeviceError } from '../../src/errors/cross-device-error.js';
import { CrossOriginError } from '../../src/errors/cross-origin-error.js';
import { DeadlineExceededError } from '../../src/errors/deadline-exceeded-error.js';
import { DiskFullError } from '../../src/errors/disk-full-error.js';
import { EmptySourceError } from '../../src/errors/empty-source-error.js';
import { ExportFailedError } from '../../src/errors/export-failed-error.js';
import { FAILURE_CLASSES } from '../../src/errors/failure-classes.js';
import { ApiError } from '../../src/errors/api-error.js';
import { FAILURE_MARK, decodeFailure, describeFailure, encodeFailure } from '../../src/errors/failure-codec.js';
import { MAX_FAILURE_MESSAGE } from '../../src/errors/failure-wire.js';
import { FleetError } from '../../src/errors/fleet-error.js';
import { GcMarkIncompleteError } from '../../src/errors/gc-mark-incomplete-error.js';
import { InvalidJsonError } from '../../src/errors/invalid-json-error.js';
import { IsolationUnavailableError } from '../../src/errors/isolation-unavailable-error.js';
import { OverlayFailedError } from '../../src/errors/overlay-failed-error.js';
import { UpgradeFailedError } from '../../src/errors/upgrade-failed-error.js';
import { JobCancelledError } from '../../src/errors/job-cancelled-error.js';
import { JobDataUnreadableError } from '../../src/errors/job-data-unreadable-error.js';
import { LegacyFileVanishedError } from '../../src/errors/legacy-file-vanished-error.js';
import { MigrationMismatchError } from '../../src/errors/migration-mismatch-error.js';
import { KeyMigrationRefusedError } from '../../src/errors/key-migration-refused-error.js';
import { NameTooLongError } from '../../src/errors/name-too-long-error.js';
import { NotImplementedError } from '../../src/errors/not-implemented-error.js';
import { NotReadyError } from '../../src/errors/not-ready-error.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { PayloadTooLargeError } from '../../src/errors/payload-too-large-error.js';
import { QuotaExceededError } from '../../src/errors/quota-exceeded-error.js';
import { FileNotFoundError } from '../../src/errors/file-not-found-error.js';
import { ForbiddenError } from '../../src/errors/forbidden-error.js';
import { JobNotFoundError } from '../../src/errors/job-not-found-error.js';
import { NotAFileError } from '../../src/errors/not-a-file-error.js';
import { WorkspaceBusyError } from '../../src/errors/workspace-busy-error.js';
import { ReadOnlyStorageError } from '../../src/errors/read-only-storage-error.js';
import { RedisUnavailableError } from '../../src/errors/redis-unavailable-error.js';
import { RemoteJobError } from '../../src/errors/remote-job-error.js';
import { RouteNotFoundError } from '../../src/errors/route-not-found-error.js';
import { BoardDisabledError } from '../../src/errors/board-disabled-error.js';
import { SandboxUidsExhaustedError } from '../../src/errors/sandbox-uids-exhausted-error.js';
import { ShrinkGuardError } from '../../src/errors/shrink-guard-error.js';
import { SnapshotUnavailableError } from '../../src/providers/snapshot-unavailable-error.js';
import { StaleGenerationError } from '../../src/errors/stale-generation-error.js';
import { StorageIoError } from '../../src/errors/storage-io-error.js';
import { SweepLeaseError } from '../../src/errors/sweep-lease-error.js';
import { SymlinkLoopError } from '../../src/errors/symlink-loop-error.js';
import { TreeChangedError } from '../../src/errors/tree-changed-error.js';
import { TreeLimitError } from '../../src/errors/tree-limit-error.js';
import { UnauthorizedError } from '../../src/errors/unauthorized-error.js';
import { UnsafeListingError } from '../../src/errors/unsafe-listing-error.js';
import { UnsupportedMediaTypeError } from '../../src/errors/unsupported-media-type-error.js';
import { UsageError } from '../../src/errors/usage-error.js';
import { WaitTimeoutError } from '../../src/errors/wait-timeout-error.js';
import { WorkspaceConflictError } from '../../src/errors/workspace-conflict-error.js';
import { WorkspaceNotFoundError } from '../../src/errors/workspace-not-found-error.js';
import { DurabilityError } from '../../src/archive/fsync.js';
import { BaseRegistryError } from '../../src/state/base-registry.js';
import { EmbeddedRedisError } from '../../src/embedded/embedded-redis.js';
import { LockLostError, LockUnavailableError } from '../../src/locks/lock-errors.js';
import { RevisionNotFoundError } from '../../src/persist/rollback-workspace.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../../src/providers/provider-errors.js';
import { ProviderUnavailableError } from '../../src/providers/provider-registry.js';
import { UnsafeTarEntryError } from '../../src/providers/vercel/unsafe-tar-entry-error.js';
import { ProvisionSupersededError } from '../../src/provision/provision-workspace.js';
import { ResetInterruptedError } from '../../src/provision/reset-workspace.js';
import { RsyncError } from '../../src/rsync/rsync-error.js';
import { CheckpointNotFoundError } from '../../src/state/checkpoint-store.js';
import { HeadMovedError } from '../../src/state/checkpoint-store.js';
import { MissingSystemToolError } from '../../src/system-tools.js';

const failure = { operation: 'rename', path: 'ws/a.txt', errno: 'ENOSPC' };

// One instance of every concrete fleet error class, as its throw sites build it.
const SPECIMENS: readonly FleetError[] = [
  new BackfillDeferredError('deferred', { context: { workspaceId: 'ws' } }),
  new BakeFailedError('step failed', { context: { step: 'install', command: 'npm ci', exitCode: 1 } }),
  new ChecksumMismatchError('ws', 'a.txt', 'aa', 'bb'),
  new ConfigError('FLEET_X', 'a number', 'abc'),
  new CrossDeviceError({ ...failure, errno: 'EXDEV' }, 'crosses filesystems'),
  new CrossOriginError('refused', { context: { origin: 'https://evil.example' } }),
  new DeadlineExceededError('persist job 7', 5_000),
  new DiskFullError(failure, 'no space left'),
  new EmptySourceError('empty', { context: { workspaceId: 'ws' } }),
  new ExportFailedError('export failed', { context: { workspaceId: 'ws' } }),
  new GcMarkIncompleteError('mark incomplete', { context: { scanned: 3 } }),
  new InvalidJsonError('body is not JSON'),
  new IsolationUnavailableError('no bwrap'),
  new JobCancelledError('persist@h1', '12', 'lock lost'),
  new UpgradeFailedError('migration command 1 failed (exit 1)', { context: { workspaceId: 'ws', step: 'migrate', exitCode: 1 } }),
  new OverlayFailedError('overlay of base snap-1 is 300000 bytes, over 262144', { context: { workspaceId: 'ws', snapshotId: 'snap-1' } }),
  new JobDataUnreadableError('bake', '12', new SyntaxError('Unexpected token')),
  new LegacyFileVanishedError('ws', 'gone.txt'),
  new MigrationMismatchError('mismatch', { context: { workspaceId: 'ws', revision: 'r1' } }),
  new KeyMigrationRefusedError('2 live workers', { context: { liveWorkers: 2 } }),
  new NameTooLongError({ ...failure, errno: 'ENAMETOOLONG' }, 'too long'),
  new NotImplementedError('vercel export'),
  new NotReadyError('ws', 3, null),
  new PayloadInvalidError('persist payload', [{ field: 'generation', message: 'expected number', value: 'x' }]),
  new PayloadTooLargeError(1_024),
  new QuotaExceededError('ws', 'bytes', 2_000, 1_000),
  new FileNotFoundError('ws', 'a.txt', 'revision r1'),
  new ForbiddenError('outside its scope'),
  new JobNotFoundError('gc', 'j1'),
  new NotAFileError('ws', 'dir', 'a directory'),
  new WorkspaceBusyError('ws', 'readFile', 3, new Error('timeout')),
  new ReadOnlyStorageError({ ...failure, errno: 'EROFS' }, 'read-only'),
  new RedisUnavailableError('10.0.0.5:6379', 'READONLY', new ReplyError("READONLY You can't write against a read only replica.")),
  new RouteNotFoundError('GET', '/nope'),
  new BoardDisabledError('/admin/queues'),
  new SandboxUidsExhaustedError('ws', { first: 100_000, last: 100_009 }, { bucket: 3, buckets: 128 }),
  new ShrinkGuardError('refused', { context: { workspaceId: 'ws', before: 10, after: 0 } }),
  new StaleGenerationError('ws', 1, 2),
  new StorageIoError({ ...failure, errno: 'EIO' }, 'i/o error'),
  new SweepLeaseError('lease held', { context: { source: 'legacy' } }),
  new SymlinkLoopError({ ...failure, errno: 'ELOOP' }, 'a symlink is in the way'),
  new TreeChangedError('root replaced', { context: { workspaceId: 'ws' } }),
  new TreeLimitError('depth', 'a/b/c', 'too deep'),
  new UnauthorizedError('missing bearer token'),
  new UnsafeListingError('absolute path', Buffer.from('/etc/passwd')),
  new UnsupportedMediaTypeError('text/plain'),
  new UsageError('unknown flag --x'),
  new WaitTimeoutError('gc', '3', 1_000),
  new WorkspaceConflictError('no source restores it', { context: { workspaceId: 'ws' } }),
  new WorkspaceNotFoundError('ws'),
  // Classes of other layers: they decode as RemoteJobError with the same data.
  new DurabilityError('fsync failed', { context: { dir: '/archive' } }),
  new BaseRegistryError('no such base'),
  new EmbeddedRedisError('redis-server did not start'),
  new LockUnavailableError('held', { context: { resource: 'persist:ws' } }),
  new LockLostError('lost'),
  new RevisionNotFoundError('no revision r9'),
  new ProviderBusyError('local', 'exec', 'host did not answer'),
  new ProviderGoneError('local', 'get', 'no such sandbox'),
  new ProviderPermanentError('vercel', 'create', 'refused', { context: { status: 400 } }),
  new ProviderUnavailableError('vercel is not configured'),
  new UnsafeTarEntryError('../x', 'leaves the tree'),
  new ProvisionSupersededError('superseded', { context: { workspaceId: 'ws', generation: 2 } }),
  new ResetInterruptedError('interrupted'),
  new SnapshotUnavailableError('vercel', 'create', 'snap-1', 'expired'),
  new RsyncError(23, 'persist', 'rsync: some files vanished\nrsync error: partial transfer'),
  new RsyncError(25, 'persist', 'rsync: --max-delete limit stopped deletions'),
  new CheckpointNotFoundError('no checkpoint c1'),
  new HeadMovedError('head moved'),
  new MissingSystemToolError(['rsync']),
];

// Own fields a constructor computes that the context does not carry (so a revived error lacks them).
const NOT_IN_CONTEXT: Readonly<Record<string, readonly string[]>> = {
  SandboxUidsExhaustedError: ['range', 'share'],
};

const job = { queue: 'persist@host-a', jobId: '7' };

describe('failure codec round trips', () => {
  it('lists every concrete error class of src/errors, and the specimens cover them all', async () => {
    const dir = new URL('../../src/errors/', import.meta.url);
    const exported = new Set<unknown>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
      for (const value of Object.values(module)) if (typeof value === 'function' && value.prototype instanceof FleetError) exported.add(value);
    }
    // Abstract bases and the fallbacks themselves are not revived.
    const expected = [...exported].filter((Class) => Class !== RemoteJobError && Class !== ApiError && (Class as { name: string }).name !== 'StorageError' && (Class as { name: string }).name !== 'ProviderError');
    expect(new Set(FAILURE_CLASSES)).toEqual(new Set(expected));
    const specimenClasses = new Set(SPECIMENS.map((e) => e.constructor));
    for (const Class of FAILURE_CLASSES) expect(specimenClasses.has(Class), Class.name).toBe(true);
  });

  for (const error of SPECIMENS) {
    const revived = FAILURE_CLASSES.includes(error.constructor as (typeof FAILURE_CLASSES)[number]);
    it(`${error.name} (${error.code}, retryable ${error.retryable}) ${revived ? 'as its own class' : 'as RemoteJobError'}`, () => {
      const reason = encodeFailure(error);
      expect(reason.split('\n')[0]).toBe(`${error.code}: ${error.message.split('\n')[0]}`);
      expect(describeFailure(error)).toBe(`${error.code}: ${error.message}`);

      const decoded = decodeFailure(job.queue, job.jobId, reason);
      expect(decoded).toBeInstanceOf(revived ? error.constructor : RemoteJobError);
      expect(decoded).toBeInstanceOf(FleetError);
      expect(decoded.code).toBe(error.code);
      expect(decoded.message).toBe(error.message);
      expect(decoded.retryable).toBe(error.retryable);
      expect(decoded.context).toEqual(JSON.parse(JSON.stringify(error.context)));
      expect(decoded.remoteJob).toEqual(job);
      if (!revived) return;
      expect(decoded.name).toBe(error.name);
      const missing = NOT_IN_CONTEXT[error.name] ?? [];
      for (const key of Object.keys(error).filter((k) => k !== 'cause' && !missing.includes(k))) {
        expect((decoded as unknown as Record<string, unknown>)[key], key).toEqual(JSON.parse(JSON.stringify((error as unknown as Record<string, unknown>)[key])));
      }
    });
  }

  it('keeps what callers read off a revived error: PayloadInvalid field, JobDataUnreadable ids, storage errno', () => {
    const payload = decodeFailure('hostops@h', '1', encodeFailure(new PayloadInvalidError('hostops payload', [{ field: 'args.path', message: 'must be relative' }])));
    expect(payload).toBeInstanceOf(PayloadInvalidError);
    expect((payload as PayloadInvalidError).field).toBe('args.path');
    const unreadable = decodeFailure('bake', '12', encodeFailure(new JobDataUnreadableError('bake', '12', new Error('x'))));
    expect(unreadable).toMatchObject({ queue: 'bake', jobId: '12', code: 'JobDataUnreadable' });
    expect(decodeFailure('q', '1', encodeFailure(new DiskFullError(failure, 'full')))).toMatchObject({ operation: 'rename', path: 'ws/a.txt', errno: 'ENOSPC' });
  });

  it('carries the per-instance retry intent of a class whose verdict depends on the failure', () => {
    const vanished = decodeFailure('q', '1', encodeFailure(new RsyncError(24, 'persist', 'vanished')));
    const maxDelete = decodeFailure('q', '1', encodeFailure(new RsyncError(25, 'persist', 'max-delete')));
    expect([vanished.code, maxDelete.code]).toEqual(['RsyncFailed', 'RsyncFailed']);
    expect([vanished.retryable, maxDelete.retryable]).toEqual([true, false]);
  });

  it('marks foreign errors Unexpected and retryable (as the worker retries them)', () => {
    const decoded = decodeFailure('q', '1', encodeFailure(new Error('boom')));
    expect(decoded).toBeInstanceOf(RemoteJobError);
    expect(decoded).toMatchObject({ code: 'Unexpected', message: 'boom', retryable: true });
    const hostile = { toString: () => { throw new Error('no'); } };
    expect(decodeFailure('q', '1', encodeFailure(hostile)).code).toBe('Unexpected');
  });
});

describe('failure codec legacy and garbage reasons', () => {
  it('decodes a plain "Code: message" reason (failed before the upgrade) with no retry intent', () => {
    const decoded = decodeFailure('persist@local', '7', 'StaleGeneration: workspace ws: generation 1 is stale (current 2)');
    expect(decoded).toBeInstanceOf(RemoteJobError);
    expect(decoded).toMatchObject({ code: 'StaleGeneration', message: 'workspace ws: generation 1 is stale (current 2)', retryable: false, jobId: '7', queue: 'persist@local' });
    expect(decodeFailure('q', '1', 'RsyncFailed: line one\nline two').message).toBe('line one\nline two');
  });

  it("decodes BullMQ's stall reason as Stalled and anything else as JobFailed", () => {
    expect(decodeFailure('q', '1', 'job stalled more than allowable limit')).toMatchObject({ code: 'Stalled', retryable: false });
    expect(decodeFailure('q', '1', 'lowercase thing')).toMatchObject({ code: 'JobFailed', message: 'lowercase thing' });
    expect(decodeFailure('q', '1', undefined)).toMatchObject({ code: 'JobFailed', message: 'job failed without a reason' });
    expect(decodeFailure('q', '1', null).code).toBe('JobFailed');
    expect(decodeFailure('q', '1', '').code).toBe('JobFailed');
  });

  it('falls back to the human line when the structured line is broken, never throwing', () => {
    const human = 'ShrinkGuard: refused';
    for (const tail of ['{not json', '[]', 'null', '{"code":"lower case","message":"m","retryable":false,"context":{}}', '{"code":"X","message":"m","retryable":"yes","context":{}}', `{"code":"X","message":"${'m'.repeat(70_000)}"}`]) {
      const decoded = decodeFailure('q', '1', `${human}\n${FAILURE_MARK}${tail}`);
      expect(decoded, tail.slice(0, 40)).toBeInstanceOf(RemoteJobError);
      expect(decoded).toMatchObject({ code: 'ShrinkGuard', message: 'refused', retryable: false });
    }
    expect(decodeFailure('q', '1', `\n${FAILURE_MARK}{`).code).toBe('JobFailed');
    expect(decodeFailure('q', '1', 'x'.repeat(100_000)).message.length).toBeLessThan(MAX_FAILURE_MESSAGE + 64);
  });

  it('never lets a context key replace what the instance has, nor set a prototype', () => {
    const wire = { code: 'StaleGeneration', name: 'StaleGenerationError', message: 'm', retryable: false, context: { code: 'Other', retryable: true, message: 'x', toJSON: 1, cause: 'c', __proto__: { polluted: true }, workspaceId: 'ws' } };
    const json = JSON.stringify(wire).replace('"context":{', '"context":{"__proto__":{"polluted":true},');
    const decoded = decodeFailure('q', '1', `StaleGeneration: m\n${FAILURE_MARK}${json}`);
    expect(decoded).toBeInstanceOf(StaleGenerationError);
    expect(decoded).toMatchObject({ code: 'StaleGeneration', retryable: false, message: 'm', workspaceId: 'ws' });
    expect(typeof decoded.toJSON).toBe('function');
    expect(decoded.cause).toBeUndefined();
    expect((decoded as unknown as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('decodes an unknown class name as RemoteJobError with the real retry intent and context', () => {
    const json = JSON.stringify({ code: 'FutureThing', name: 'FutureThingError', message: 'm', retryable: true, context: { n: 1 } });
    expect(decodeFailure('q', '1', `FutureThing: m\n${FAILURE_MARK}${json}`)).toMatchObject({ code: 'FutureThing', retryable: true, context: { n: 1 } });
  });
});

describe('failure context bounds', () => {
  it('caps strings, depth, breadth and the total, and turns non-JSON values into data', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const bounded = boundContext({
      long: 'x'.repeat(10_000),
      deep: { a: { b: { c: { d: { e: 1 } } } } },
      wide: Array.from({ length: 500 }, (_, i) => i),
      cyclic,
      big: 10n ** 30n,
      bytes: Buffer.alloc(4096),
      when: new Date(0),
      cause: new Error('inner'),
      nan: Number.NaN,
      fn: () => 1,
      gone: undefined,
    });
    expect((bounded.long as string).startsWith('x'.repeat(MAX_CONTEXT_STRING))).toBe(true);
    expect((bounded.long as string).length).toBeLessThan(MAX_CONTEXT_STRING + 40);
    expect(bounded.deep).toEqual({ a: { b: { c: '[object]' } } });
    expect((bounded.wide as unknown[]).length).toBe(51);
    expect(bounded.big).toBe('1000000000000000000000000000000');
    expect(bounded.bytes).toBe('[4096 bytes]');
    expect(bounded.when).toBe('1970-01-01T00:00:00.000Z');
    expect(bounded.cause).toEqual({ name: 'Error', message: 'inner' });
    expect(bounded.nan).toBe('NaN');
    expect('fn' in bounded || 'gone' in bounded).toBe(false);
    expect(() => JSON.stringify(bounded)).not.toThrow();
  });

  it('drops top-level keys past the total cap and names them', () => {
    const context = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'y'.repeat(1_000)]));
    const bounded = boundContext(context);
    expect(JSON.stringify(bounded).length).toBeLessThan(MAX_CONTEXT_JSON + 400);
    expect((bounded.contextDropped as string[]).length).toBeGreaterThan(0);
    expect(Object.keys(bounded).length - 1 + (bounded.contextDropped as string[]).length).toBe(20);
  });

  it('reads a throwing getter as [unreadable], and a hostile error still encodes and decodes', () => {
    const context = Object.defineProperty({}, 'bad', { enumerable: true, get: () => { throw new Error('no'); } });
    expect(boundContext(context)).toEqual({ bad: '[unreadable]' });
    const error = new ShrinkGuardError('refused', { context: { listing: 'z'.repeat(1_000_000), nested: { deep: [[[[['x']]]]] } } });
    const reason = encodeFailure(error);
    expect(reason.length).toBeLessThan(20_000);
    expect(decodeFailure('q', '1', reason)).toBeInstanceOf(ShrinkGuardError);
  });

  it('caps a huge message in both lines', () => {
    const reason = encodeFailure(new ShrinkGuardError('m'.repeat(100_000)));
    expect(reason.length).toBeLessThan(3 * MAX_FAILURE_MESSAGE);
    expect(decodeFailure('q', '1', reason).message).toBe(reason.slice('ShrinkGuard: '.length, reason.indexOf('\n')));
  });
});
