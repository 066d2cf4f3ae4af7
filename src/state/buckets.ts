/**
 * Reading the per-bucket indexes of the `sharded` key layout (see keys.ts) as one: a command per
 * bucket, all sent at once (not one pipeline: a cluster serves the buckets from different nodes,
 * and an ioredis cluster pipeline must stay on one), the replies in bucket order. Under the other
 * layouts there is one bucket and this is one command.
 */
import { Cluster, type ChainableCommander } from 'ioredis';
import type { FleetKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';

/** Runs `command` once per bucket, concurrently; the replies in bucket order. */
export function inEveryBucket<T>(keys: Pick<FleetKeys, 'buckets'>, command: (bucket: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: keys.buckets }, (_, b) => command(b)));
}

/** Sum of a count read in every bucket. */
export async function sumOverBuckets(keys: Pick<FleetKeys, 'buckets'>, count: (bucket: number) => Promise<number>): Promise<number> {
  return (await inEveryBucket(keys, count)).reduce((sum, n) => sum + Number(n), 0);
}

/** Merges `WITHSCORES` replies (member, score, member, score, ...) given in bucket order: the `limit` lowest scores, lowest first, each with its bucket. */
export function lowestScored(replies: readonly (readonly string[])[], limit: number): { member: string; bucket: number }[] {
  const entries: { member: string; score: number; bucket: number }[] = [];
  replies.forEach((reply, bucket) => {
    for (let i = 0; i + 1 < reply.length; i += 2) entries.push({ member: reply[i]!, score: Number(reply[i + 1]), bucket });
  });
  entries.sort((a, b) => a.score - b.score || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
  return entries.slice(0, limit).map(({ member, bucket }) => ({ member, bucket }));
}

/** `lowestScored`, members only. */
export const lowestScores = (replies: readonly (readonly string[])[], limit: number): string[] => lowestScored(replies, limit).map((entry) => entry.member);

/** Groups items by a bucket number (insertion order kept within each group). */
export function groupBy<T>(items: readonly T[], bucketOf: (item: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const b = bucketOf(item);
    const group = groups.get(b);
    if (group) group.push(item);
    else groups.set(b, [item]);
  }
  return groups;
}

/**
 * One command per workspace, pipelined: one pipeline on a single server (as every layout had
 * before buckets), one per bucket on a cluster (a cluster pipeline must stay on one node, and a
 * bucket is one slot), sent concurrently. The replies in the order of `workspaceIds`.
 */
export async function perWorkspace<T>(
  redis: RedisClient,
  keys: Pick<FleetKeys, 'bucket'>,
  workspaceIds: readonly string[],
  queue: (pipeline: ChainableCommander, workspaceId: string) => void,
): Promise<T[]> {
  if (workspaceIds.length === 0) return [];
  const indexes = workspaceIds.map((_, i) => i);
  // Every workspace in one group on a single server (any layout), a group per bucket on a cluster.
  const groups = redis instanceof Cluster ? [...groupBy(indexes, (i) => keys.bucket(workspaceIds[i]!)).values()] : [indexes];
  const replies = new Array<T>(workspaceIds.length);
  await Promise.all(
    groups.map(async (group) => {
      const pipeline = redis.pipeline();
      for (const i of group) queue(pipeline, workspaceIds[i]!);
      const results = (await pipeline.exec()) ?? [];
      group.forEach((index, n) => {
        const [error, reply] = results[n] ?? [new Error('pipeline returned no reply'), null];
        if (error) throw error;
        replies[index] = reply as T;
      });
    }),
  );
  return replies;
}
