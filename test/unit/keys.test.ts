// The Redis key names are a storage format: existing deployments read them, so a builder may be
// added but never renamed. Every builder of keys.ts is pinned here.
import { describe, expect, it } from 'vitest';
import { fleetKeys, WORKSPACE_BUCKETS, workspaceBucket } from '../../src/keys.js';

const k = fleetKeys('{fleet}');

const PINNED: Record<string, string> = {
  address: k.address('ws'),
  generation: k.generation('ws'),
  runtime: k.runtime('ws'),
  pendingCreates: k.pendingCreates(0),
  persistIntent: k.persistIntent('ws'),
  persistStatus: k.persistStatus('ws'),
  persistClaim: k.persistClaim('ws', 'persist@h', '7'),
  readinessProbe: k.readinessProbe(),
  workspaces: k.workspaces(0),
  activity: k.activity('ws'),
  quotaUsage: k.quotaUsage('ws'),
  overQuota: k.overQuota(0),
  checkpoint: k.checkpoint(0, 'c1'),
  checkpoints: k.checkpoints('ws'),
  head: k.head('ws'),
  attached: k.attached('ws'),
  attachSeq: k.attachSeq('ws'),
  checkpointIndex: k.checkpointIndex('ws'),
  unattached: k.unattached(0),
  bullQueue: k.bullQueue('persist@h', 'events'),
  bullQueueIdPattern: k.bullQueueIdPattern(),
  lock: k.lock('provision:ws'),
  workers: k.workers(),
  worker: k.worker('h:1:ab'),
  hosts: k.hosts(),
  host: k.host('h'),
  sandboxHosts: k.sandboxHosts(),
  counters: k.counters(),
  metrics: k.metrics(),
  base: k.base('s1'),
  bases: k.bases(),
  baseRefs: k.baseRefs('s1'),
  baseByHash: k.baseByHash('local', 'abc'),
  activeBases: k.activeBases(),
  bakeSeq: k.bakeSeq(),
  migrated: k.migrated(0),
  backfillSweep: k.backfillSweep(),
  backfillSweepLease: k.backfillSweepLease('blob'),
  sandboxUid: k.sandboxUid('ws'),
  sandboxUidOwners: k.sandboxUidOwners(0),
  sandboxUidCursor: k.sandboxUidCursor(0),
  storeWriters: k.storeWriters(),
  verifyCursor: k.verifyCursor(),
  execOutput: k.execOutput('e1'),
  events: k.events(),
};

describe('fleetKeys', () => {
  it('keeps every stored key name', () => {
    expect(PINNED).toEqual({
      address: '{fleet}:ws:ws:addr',
      generation: '{fleet}:ws:ws:gen',
      runtime: '{fleet}:ws:ws:runtime',
      pendingCreates: '{fleet}:pending-creates',
      persistIntent: '{fleet}:ws:ws:persist-intent',
      persistStatus: '{fleet}:ws:ws:persist-status',
      persistClaim: '{fleet}:persist-claim:persist@h:7',
      readinessProbe: '{fleet}:readyz-probe',
      workspaces: '{fleet}:workspaces',
      activity: '{fleet}:ws:ws:activity',
      quotaUsage: '{fleet}:ws:ws:quota-usage',
      overQuota: '{fleet}:over-quota',
      checkpoint: '{fleet}:ckpt:c1',
      checkpoints: '{fleet}:ws:ws:ckpts',
      head: '{fleet}:ws:ws:head',
      attached: '{fleet}:ws:ws:attached',
      attachSeq: '{fleet}:ws:ws:attach-seq',
      checkpointIndex: '{fleet}:ws:ws:ckpt-index',
      unattached: '{fleet}:ckpt-unattached',
      bullQueue: '{fleet}:persist@h:events',
      bullQueueIdPattern: '{fleet}:*:id',
      lock: '{fleet}:lock:provision:ws',
      workers: '{fleet}:workers',
      worker: '{fleet}:workers:h:1:ab',
      hosts: '{fleet}:hosts',
      host: '{fleet}:host:h',
      sandboxHosts: '{fleet}:sandbox-hosts',
      counters: '{fleet}:counters',
      metrics: '{fleet}:metrics',
      base: '{fleet}:base:s1',
      bases: '{fleet}:bases',
      baseRefs: '{fleet}:base:s1:refs',
      baseByHash: '{fleet}:bases:hash:local:abc',
      activeBases: '{fleet}:bases:active',
      bakeSeq: '{fleet}:bake-seq',
      migrated: '{fleet}:migrated',
      backfillSweep: '{fleet}:backfill:sweep',
      backfillSweepLease: '{fleet}:backfill:sweep:blob:lease',
      sandboxUid: '{fleet}:ws:ws:sandbox-uid',
      sandboxUidOwners: '{fleet}:sandbox-uids',
      sandboxUidCursor: '{fleet}:sandbox-uid-cursor',
      storeWriters: '{fleet}:store-writers',
      verifyCursor: '{fleet}:verify:cursor',
      execOutput: '{fleet}:exec-out:e1',
      events: '{fleet}:events',
    });
  });

  it('pins every builder (a new one is added to the list above)', () => {
    const builders = Object.keys(k).filter((name) => !['prefix', 'layout', 'buckets', 'bucket', 'queuePrefix', 'bullQueueOfIdKey', 'workspaceKeyPattern', 'workspaceOfKey'].includes(name));
    expect(builders.sort()).toEqual(Object.keys(PINNED).sort());
  });

  it('reads the queue name back from a matched id counter, and escapes glob characters of the prefix', () => {
    expect(k.bullQueueOfIdKey(k.bullQueue('hostops@h-1', 'id'))).toBe('hostops@h-1');
    expect(fleetKeys('a*{f}').bullQueueIdPattern()).toBe('a\\*{f}:*:id');
  });

  it('single-slot (the default) gives every queue the prefix itself', () => {
    expect(k.layout).toBe('single-slot');
    expect(k.queuePrefix('persist@h')).toBe('{fleet}');
    expect(fleetKeys('{fleet}', 'single-slot').bullQueue('provision', 'wait')).toBe('{fleet}:provision:wait');
  });

  it('per-queue gives each queue a tag of its own and keeps the fleet keys in the prefix\'s slot', () => {
    const q = fleetKeys('app{fleet}x', 'per-queue');
    expect(q.queuePrefix('persist@h')).toBe('app{fleet:persist@h}x');
    expect(q.bullQueue('persist@h', 'events')).toBe('app{fleet:persist@h}x:persist@h:events');
    expect(q.address('ws')).toBe('app{fleet}x:ws:ws:addr');
    expect(q.bullQueueIdPattern()).toBe('app{fleet:*}x:*:id');
    for (const queue of ['provision', 'hostops@h-1', 'persist@vercel']) expect(q.bullQueueOfIdKey(q.bullQueue(queue, 'id'))).toBe(queue);
  });

  it("per-queue's id pattern matches every queue's id counter and no fleet key (as Redis globs it)", () => {
    const q = fleetKeys('{fleet}', 'per-queue');
    // Redis MATCH semantics for the characters used here: * is any run, everything else literal.
    const glob = (pattern: string) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    const match = glob(q.bullQueueIdPattern());
    expect(match.test(q.bullQueue('provision', 'id'))).toBe(true);
    expect(match.test(q.bullQueue('checkpoint@host-a', 'id'))).toBe(true);
    expect(match.test(q.address('id'))).toBe(false);
    expect(match.test(fleetKeys('{fleet}').bullQueue('provision', 'id'))).toBe(false);
  });

  it('sharded puts each workspace\'s state, its indexes and its locks in its bucket\'s tag, and the fleet-wide keys in the prefix\'s', () => {
    const s = fleetKeys('app{fleet}x', 'sharded');
    const b = s.bucket('ws');
    expect(s.buckets).toBe(WORKSPACE_BUCKETS);
    expect(b).toBe(workspaceBucket('ws', WORKSPACE_BUCKETS));
    const tag = `app{fleet/ws${b}}x`;
    expect(s.address('ws')).toBe(`${tag}:ws:ws:addr`);
    expect(s.checkpoint(b, 'c1')).toBe(`${tag}:ckpt:c1`);
    expect(s.workspaces(b)).toBe(`${tag}:workspaces`);
    expect(s.persistClaim('ws', 'persist@h', '7')).toBe(`${tag}:persist-claim:persist@h:7`);
    expect(s.lock('provision:ws')).toBe(`${tag}:lock:provision:ws`);
    expect(s.lock('persist:ws')).toBe(`${tag}:lock:persist:ws`);
    expect(s.lock('gc:orphans')).toBe('app{fleet}x:lock:gc:orphans');
    expect(s.lock('bake:abc')).toBe('app{fleet}x:lock:bake:abc');
    expect(s.hosts()).toBe('app{fleet}x:hosts');
    expect(s.queuePrefix('provision')).toBe('app{fleet:provision}x');
    // The queue id pattern never matches a bucket's key.
    const glob = new RegExp(`^${s.bullQueueIdPattern().split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    expect(glob.test(s.persistClaim('ws', 'persist@h', 'id'))).toBe(false);
    expect(glob.test(s.bullQueue('provision', 'id'))).toBe(true);
  });

  it('buckets are stable (a storage format) and spread workspaces evenly', () => {
    // Pinned: FNV-1a 32 of the UTF-8 bytes, modulo the bucket count.
    expect([workspaceBucket('ws', 128), workspaceBucket('workspace-1', 128), workspaceBucket('é', 128), workspaceBucket('', 128)]).toEqual([31, 16, 65, 69]);
    const counts = new Array<number>(WORKSPACE_BUCKETS).fill(0);
    for (let i = 0; i < 128_000; i++) counts[workspaceBucket(`ws-${i}`, WORKSPACE_BUCKETS)]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(850);
    expect(Math.max(...counts)).toBeLessThan(1150);
  });

  it('every layout but sharded has one bucket, 0, and the historical keys', () => {
    for (const layout of ['single-slot', 'per-queue'] as const) {
      const q = fleetKeys('{fleet}', layout);
      expect(q.buckets).toBe(1);
      expect(q.bucket('anything')).toBe(0);
      expect(q.workspaces(q.bucket('ws'))).toBe('{fleet}:workspaces');
      expect(q.lock('provision:ws')).toBe('{fleet}:lock:provision:ws');
    }
  });
});
