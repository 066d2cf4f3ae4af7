/**
 * Where one persist spends its time, observed from outside the protocol: progress steps give
 * the phase boundaries, and timing proxies around the archive and
 * checkpoint stores split the commit phase. Nothing in `src/persist` is instrumented.
 */
import type { PersistDeps } from '../../src/persist/persist-workspace.js';
import type { Progress } from '../../src/jobs/processor-context.js';

export interface PersistPhases {
  /** Fence, gate, head, reading the current manifest, opening the tree. */
  readonly prepare_ms: number;
  /** Of which: reading and parsing the current revision's manifest. */
  readonly read_current_manifest_ms: number;
  /**
   * The one walk of the live tree: hard-linking unchanged files from the current revision,
   * copying and hashing new and changed ones (everything, for a first revision).
   */
  readonly build_ms: number;
  /** Checks of the built tree (torn source, shrink guard) and the manifest. */
  readonly check_ms: number;
  /** Making the revision's data durable before its manifest (syncfs or per-file fsync). */
  readonly durability_ms: number;
  /** Manifest: JSON, write, fsync, rename. */
  readonly manifest_write_ms: number;
  /** Rename into place + fsync of revs/. */
  readonly commit_rename_ms: number;
  /** Checkpoint record + fenced attach (Redis). */
  readonly redis_record_attach_ms: number;
  /** `current` symlink flip + directory fsync. */
  readonly flip_current_ms: number;
  readonly total_ms: number;
}

export interface PersistProbe {
  readonly deps: Partial<PersistDeps>;
  onProgress(update: Progress): void;
  phases(): PersistPhases;
}

// Wraps the named async methods of `target`, adding their durations into `spans`.
function timedMethods<T extends object>(target: T, names: readonly string[], prefix: string, spans: Map<string, number>, marks: Map<string, number>): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== 'function') return value;
      if (typeof property !== 'string' || !names.includes(property)) return value.bind(object);
      return async (...args: unknown[]) => {
        const started = performance.now();
        if (!marks.has(`${prefix}.${property}`)) marks.set(`${prefix}.${property}`, started);
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(object, args);
        } finally {
          spans.set(`${prefix}.${property}`, (spans.get(`${prefix}.${property}`) ?? 0) + performance.now() - started);
        }
      };
    },
  });
}

/** A probe for one persist run; pass `deps` and `onProgress` to the run. */
export function persistProbe(base: PersistDeps): PersistProbe {
  const started = performance.now();
  const marks = new Map<string, number>();
  const spans = new Map<string, number>();
  const at = (name: string) => marks.get(name) ?? Number.NaN;
  const span = (name: string) => spans.get(name) ?? 0;
  return {
    deps: {
      archive: timedMethods(base.archive, ['readManifest', 'readRecord', 'writeManifest', 'writeRecord', 'commit', 'flipCurrent'], 'archive', spans, marks),
      checkpoints: timedMethods(base.checkpoints, ['record', 'attach'], 'checkpoints', spans, marks),
    },
    // The first report of each step marks its start (a step reports progress many times).
    onProgress: (update) => {
      if (!marks.has(`step:${update.step}`)) marks.set(`step:${update.step}`, performance.now());
    },
    phases: () => ({
      prepare_ms: at('step:link') - started,
      build_ms: at('step:scan') - at('step:link'),
      read_current_manifest_ms: span('archive.readManifest') + span('archive.readRecord'),
      check_ms: at('step:commit') - at('step:scan'),
      // Format 2 writes a record where format 1 writes a manifest.
      durability_ms: (marks.has('archive.writeRecord') ? at('archive.writeRecord') : at('archive.writeManifest')) - at('step:commit'),
      manifest_write_ms: span('archive.writeManifest') + span('archive.writeRecord'),
      commit_rename_ms: span('archive.commit'),
      redis_record_attach_ms: span('checkpoints.record') + span('checkpoints.attach'),
      flip_current_ms: span('archive.flipCurrent'),
      total_ms: at('step:done') - started,
    }),
  };
}
