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

/** Groups ids by their bucket. */
export function byBucket(keys: Pick<FleetKeys, 'bucket'>, ids: readonly string[]): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const id of ids) {
    const b = keys.bucket(id);
    const group = groups.get(b);
    if (group) group.push(id);
    else groups.set(b, [id]);
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
  const groups: (readonly number[])[] = [];
  if (redis instanceof Cluster) {
    const byB = new Map<number, number[]>();
    workspaceIds.forEach((ws, i) => {
      const b = keys.bucket(ws);
      const group = byB.get(b);
      if (group) group.push(i);
      else byB.set(b, [i]);
    });
    groups.push(...byB.values());
  } else if (workspaceIds.length > 0) {
    groups.push(workspaceIds.map((_, i) => i));
  }
  const replies = new Array<T>(workspaceIds.length);
  await Promise.all(
    groups.map(async (indexes) => {
      const pipeline = redis.pipeline();
      for (const i of indexes) queue(pipeline, workspaceIds[i]!);
      const results = (await pipeline.exec()) ?? [];
      indexes.forEach((index, n) => {
        const [error, reply] = results[n] ?? [new Error('pipeline returned no reply'), null];
        if (error) throw error;
        replies[index] = reply as T;
      });
    }),
  );
  return replies;
}
