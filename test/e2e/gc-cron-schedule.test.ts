// A cron pattern in FLEET_GC_SCHEDULE reaches BullMQ's job scheduler through the Procfile's gc
// process (`fleet worker --queues gc`); milliseconds stay an interval, `off` removes the kind;
// a bad pattern stops the process at start-up, naming the variable and the value.
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { loadConfig } from '../../src/config.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';
import { killGroup, runFleet, startFleet } from '../helpers/processes.js';

describe('GC schedules with cron patterns', () => {
  it('installs a cron pattern, an interval and an off through fleet worker --queues gc', { timeout: 60_000 }, async () => {
    const env = await testEnv({ FLEET_GC_SCHEDULE: 'retention=(0 3 * * *),objects=(0,30 * * * *),litter=120000,verify=off' });
    const worker = startFleet(['worker', '--queues', 'gc'], env);
    addCleanup(() => killGroup(worker.child, 'SIGKILL'));
    await worker.waitForOutput('serving gc');
    const queue = new Queue('gc', { connection: testConnection(loadConfig(env)), prefix: fleetKeys(env.FLEET_PREFIX!, loadConfig(env).redis.keyLayout).queuePrefix('gc') });
    addCleanup(() => queue.close());
    expect(await queue.getJobScheduler('gc:retention')).toMatchObject({ pattern: '0 3 * * *', tz: 'UTC' });
    expect(await queue.getJobScheduler('gc:objects')).toMatchObject({ pattern: '0,30 * * * *' });
    expect(await queue.getJobScheduler('gc:litter')).toMatchObject({ every: 120_000 });
    expect(await queue.getJobScheduler('gc:verify')).toBeUndefined();
    // The next run of the daily pattern is at 03:00 UTC.
    const next = (await queue.getJobScheduler('gc:retention'))!.next!;
    expect(new Date(next).toISOString()).toMatch(/T03:00:00\.000Z$/);
    killGroup(worker.child, 'SIGTERM');
    expect((await worker.exited).code).toBe(0);

    const bad = await runFleet(['worker', '--queues', 'gc'], { ...env, FLEET_GC_SCHEDULE: 'retention=(0 25 * * *)' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('FLEET_GC_SCHEDULE: expected a comma-separated list of kind=milliseconds|(cron pattern)|off');
    expect(bad.stderr).toContain('retention=(0 25 * * *)');
  });
});
