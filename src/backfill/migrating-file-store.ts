/**
 * App-side dual read during the migration (seed 002, M2): `readFile` reads the workspace's
 * current archive revision; on a miss, and only while the workspace is not yet migrated, it
 * reads the legacy blob store and asks for that workspace's backfill at high priority. Once a
 * workspace is migrated the archive is authoritative: a path it lacks was deleted, and the
 * legacy store is never consulted again (it would resurrect deleted files).
 *
 * Never throws for a missing file (returns null), never follows a symlink (in the archive tree
 * or the legacy store), and a failed backfill request does not fail the read (`onError`).
 * Bad input (workspace id, path with `..`, empty or absolute) throws `PayloadInvalidError`.
 */
import type { RedisClient } from '../redis.js';
import { ArchiveStore } from '../archive/archive-store.js';
import type { Config } from '../config.js';
import { fleetKeys } from '../keys.js';
import type { FleetClient } from '../producers/fleet-client.js';
import { checkRelativePath } from '../providers/local/safe-path.js';
import { WorkspaceId, parsePayload } from '../queues/payload.js';
import { closeRedis, createRedis, redisResolved } from '../redis.js';
import { MigrationStore } from '../state/migration-store.js';
import { BlobLegacySource } from './blob-legacy-source.js';
import { readArchiveFile } from './read-archive-file.js';

/** BullMQ priority of a backfill asked for by a read miss (1 = the highest explicit priority). */
export const READ_MISS_PRIORITY = 1;

export interface MigratingFileStoreOptions {
  /** Root of the archive (FLEET_ARCHIVE_ROOT). */
  readonly archiveRoot: string;
  /** The legacy store read on a miss. */
  readonly legacy: { readFile(workspaceId: string, path: string): Promise<Buffer | null> };
  /** Whether the workspace's migration is complete (the archive is authoritative). */
  isMigrated(workspaceId: string): Promise<boolean>;
  /** Asks for the workspace's backfill. */
  requestBackfill(workspaceId: string): Promise<void>;
  /** Called when a backfill request fails (the read still succeeds). */
  onError?(error: unknown, workspaceId: string): void;
  /** Called when the store is closed. */
  onClose?(): Promise<void>;
}

export interface MigratingFileStoreConnectOptions {
  readonly config: Config;
  /** Producer used to enqueue backfills. */
  readonly client: FleetClient;
  /** A `client`-role connection for migration state; created (and owned) from the config when omitted. */
  readonly connection?: RedisClient;
  readonly onError?: (error: unknown, workspaceId: string) => void;
}

export class MigratingFileStore {
  readonly #archive: ArchiveStore;

  constructor(private readonly options: MigratingFileStoreOptions) {
    this.#archive = new ArchiveStore(options.archiveRoot);
  }

  /** A store over the configured archive and legacy roots, enqueueing through `client`. */
  static connect({ config, client, connection, onError }: MigratingFileStoreConnectOptions): MigratingFileStore {
    if (!connection && !redisResolved(config.redis)) throw new Error('MigratingFileStore.connect: config.redis names no Redis and no connection was given');
    const redis = connection ?? createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-migrating-store' });
    const migrations = new MigrationStore(redis, fleetKeys(config.redis.prefix, config.redis.keyLayout));
    return new MigratingFileStore({
      archiveRoot: config.paths.archiveRoot,
      legacy: new BlobLegacySource(config.paths.legacyRoot),
      isMigrated: (workspaceId) => migrations.isMigrated(workspaceId),
      requestBackfill: async (workspaceId) => {
        await client.backfill({ kind: 'workspace', workspaceId, source: 'blob' }, { priority: READ_MISS_PRIORITY });
      },
      ...(onError ? { onError } : {}),
      ...(connection ? {} : { onClose: () => closeRedis(redis) }),
    });
  }

  /** The file's bytes, or null when neither the archive nor (before migration) the legacy store has it. */
  async readFile(workspaceId: string, path: string): Promise<Buffer | null> {
    parsePayload('workspace', WorkspaceId, workspaceId);
    checkRelativePath('path', path);
    const archived = await readArchiveFile(this.#archive, workspaceId, Buffer.from(path, 'utf8'));
    if (archived.state === 'hit') return archived.content;
    if (archived.state === 'present') return null;
    if (await this.options.isMigrated(workspaceId)) return null;
    const legacy = await this.options.legacy.readFile(workspaceId, path);
    if (legacy === null) return null;
    try {
      await this.options.requestBackfill(workspaceId);
    } catch (error) {
      this.options.onError?.(error, workspaceId);
    }
    return legacy;
  }

  async close(): Promise<void> {
    await this.options.onClose?.();
  }
}
