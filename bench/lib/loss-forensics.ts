/**
 * What the loss-window benchmark keeps when a restored tree is wrong (torn, or older than an
 * acknowledged turn), with `LOSS_WINDOW_FORENSICS=<dir>`: one JSON file per case, outside the
 * benchmark's temporary directory (which is deleted at the end). It holds what is needed to tell
 * which persist committed the restored revision and when: the provision result, the agent's
 * acknowledged and judged sequence numbers, every revision record of the workspace with the
 * agent files it holds, and the workspace's persist and checkpoint jobs (data, result, times,
 * attempts, failure) from every queue of the fleet.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import type { TreeNode } from '../../src/archive/tree-object.js';
import type { Config } from '../../src/config.js';
import { fleetKeys } from '../../src/keys.js';
import { closeRedis, createRedis } from '../../src/redis.js';
import { fleetQueueNames } from '../../src/status/queue-names.js';

export interface ForensicCase {
  readonly workspaceId: string;
  readonly provision: unknown;
  readonly ackedSeq: number;
  readonly judgedSeq: number;
  readonly detail: string | null;
  readonly restoredFiles: readonly string[];
  /** The agent's last operations (seq, ts, kind, path). */
  readonly recentOps: readonly unknown[];
}

// Every file of a revision below `agentDir` (path → size).
async function agentFiles(archive: ArchiveStore, root: string, agentDir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const walk = async (tree: string, prefix: string): Promise<void> => {
    for (const node of (await archive.objects.readTree(tree)) as TreeNode[]) {
      const rel = `${prefix}${node.name.toString('latin1')}`;
      if (node.type === 'd') await walk(node.tree, `${rel}/`);
      else if (node.type === 'f') out[rel] = node.size;
    }
  };
  const top = (await archive.objects.readTree(root)).find((n) => n.name.toString('latin1') === agentDir);
  if (top?.type === 'd') await walk(top.tree, `${agentDir}/`);
  return out;
}

export async function keepForensics(dir: string, config: Config, agentDir: string, found: ForensicCase): Promise<string> {
  const archive = new ArchiveStore(config.paths.archiveRoot);
  const revisions = [];
  for (const id of (await archive.records(found.workspaceId)).sort()) {
    const record = await archive.readRecord(found.workspaceId, id);
    if (record) revisions.push({ ...record, agentFiles: await agentFiles(archive, record.root, agentDir).catch((error: unknown) => String(error)) });
  }
  const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'loss-forensics' });
  const jobs = [];
  try {
    const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
    for (const name of await fleetQueueNames(redis, keys, config)) {
      if (!/^(persist|checkpoint)/.test(name)) continue;
      const queue = new Queue(name, { connection: redis, prefix: keys.queuePrefix(name) });
      queue.on('error', () => undefined);
      try {
        for (const job of await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'], 0, 999, false)) {
          if (!job || (job.data as { workspaceId?: string })?.workspaceId !== found.workspaceId) continue;
          jobs.push({ queue: name, id: job.id, data: job.data, result: job.returnvalue, failed: job.failedReason ?? null, attemptsMade: job.attemptsMade, timestamp: job.timestamp, processedOn: job.processedOn, finishedOn: job.finishedOn });
        }
      } finally {
        await queue.close().catch(() => undefined);
      }
    }
  } finally {
    await closeRedis(redis);
  }
  jobs.sort((a, b) => (a.processedOn ?? a.timestamp) - (b.processedOn ?? b.timestamp));
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${found.workspaceId}-${Date.now()}.json`);
  await writeFile(file, JSON.stringify({ ...found, current: await archive.current(found.workspaceId), revisions, jobs }, null, 1));
  return file;
}
