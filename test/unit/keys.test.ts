// The Redis key names are a storage format: existing deployments read them, so a builder may be
// added but never renamed. Every builder of keys.ts is pinned here.
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';

const k = fleetKeys('{fleet}');

const PINNED: Record<string, string> = {
  address: k.address('ws'),
  generation: k.generation('ws'),
  runtime: k.runtime('ws'),
  pendingCreates: k.pendingCreates(),
  persistIntent: k.persistIntent('ws'),
  persistStatus: k.persistStatus('ws'),
  persistClaim: k.persistClaim('persist@h', '7'),
  readinessProbe: k.readinessProbe(),
  workspaces: k.workspaces(),
  activity: k.activity('ws'),
  quotaUsage: k.quotaUsage('ws'),
  overQuota: k.overQuota(),
  checkpoint: k.checkpoint('c1'),
  checkpoints: k.checkpoints('ws'),
  head: k.head('ws'),
  attached: k.attached('ws'),
  attachSeq: k.attachSeq('ws'),
  checkpointIndex: k.checkpointIndex('ws'),
  unattached: k.unattached(),
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
  migrated: k.migrated(),
  backfillSweep: k.backfillSweep(),
  backfillSweepLease: k.backfillSweepLease('blob'),
  sandboxUid: k.sandboxUid('ws'),
  sandboxUidOwners: k.sandboxUidOwners(),
  sandboxUidCursor: k.sandboxUidCursor(),
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
    const builders = Object.keys(k).filter((name) => !['prefix', 'layout', 'queuePrefix', 'bullQueueOfIdKey'].includes(name));
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
});
