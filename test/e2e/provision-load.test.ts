// 1,000 concurrent provision calls for 100 workspaces from 10 producer clients against 4 real
// worker processes: exactly 100 sandboxes, every caller of a workspace gets the same handle and
// generation, 0 duplicates, 0 orphans.
import { describe, expect, it } from 'vitest';
import { runProvisionLoad } from '../../bench/provision-load.js';
import { testEnv } from '../helpers/fleet-env.js';

describe('provisioning under load', () => {
  it('1000 calls x 100 workspaces x 10 producers x 4 workers: one sandbox per workspace', { timeout: 180_000 }, async () => {
    const env = await testEnv({ FLEET_LOG_LEVEL: 'error' });
    const result = await runProvisionLoad({ env, requests: 1_000, workspaces: 100, producers: 10, workers: 4 });
    expect(result).toMatchObject({ requests: 1_000, created: 100, duplicates: 0, orphans: 0, inconsistentCallers: 0, failed: 0 });
  });
});
