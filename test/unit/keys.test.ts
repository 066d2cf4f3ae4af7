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
    const builders = Object.keys(k).filter((name) => name !== 'prefix' && name !== 'bullQueueOfIdKey');
    expect(builders.sort()).toEqual(Object.keys(PINNED).sort());
  });

  it('reads the queue name back from a matched id counter, and escapes glob characters of the prefix', () => {
    expect(k.bullQueueOfIdKey(k.bullQueue('hostops@h-1', 'id'))).toBe('hostops@h-1');
    expect(fleetKeys('a*{f}').bullQueueIdPattern()).toBe('a\\*{f}:*:id');
  });
});
