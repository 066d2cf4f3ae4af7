// Bull Board in headless Chromium (Debian's /usr/bin/chromium via playwright-core): log in, see
// every fleet queue (including a host that appears later) with real jobs, retry a failed job from
// the UI; and without credentials, get nothing. Also: disabled without a password, read-only mode,
// and the same-origin guard on writes.
import { copyFile, mkdir, mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { chromium, type BrowserContext } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { ProviderPermanentError } from '../../src/providers/provider-errors.js';
import { allQueueNames } from '../../src/status/fleet-status.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';
import { loadConfig } from '../../src/config.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { killGroup, ROOT, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'board-password-for-tests';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

// A headless Chromium with a new empty profile, closed when the test ends.
async function browser(credentials?: { username: string; password: string }): Promise<BrowserContext> {
  const profile = await mkdtemp(path.join(tmpdir(), 'fleet-chromium-'));
  addCleanup(async () => (await import('node:fs/promises')).rm(profile, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
    ...(credentials ? { httpCredentials: credentials } : {}),
  });
  addCleanup(() => context.close());
  // A loaded 2-core machine can take long to render the board; these are caps, not expectations.
  context.setDefaultTimeout(90_000);
  return context;
}

describe('Bull Board', () => {
  it('logs in, shows every fleet queue with real jobs, retries a failed job from the UI; unauthenticated gets nothing', { timeout: 240_000 }, async () => {
    const h = await createWebHarness({ FLEET_ADMIN_PASSWORD: PASSWORD });
    let failNext = true;
    await testWorkers(h.config, ['provision', 'persist', 'gc'], {
      gc: async () => {
        if (failNext) {
          failNext = false;
          throw new ProviderPermanentError('local', 'list', 'simulated outage for the board test');
        }
        return { kind: 'litter', removed: 0 };
      },
    });
    // Real jobs: a provision and a persist that complete, a gc that fails for good.
    expect((await answer(h.request('/v1/workspaces/ws-board/provision?wait=true', { json: {} }))).status).toBe(200);
    await h.write('ws-board', { 'README.md': '# board' });
    expect((await answer(h.request('/v1/workspaces/ws-board/persist?wait=true', { json: { generation: 1, reason: 'turn-end', delete: true } }))).status).toBe(200);
    const failed = await answer(h.request('/v1/gc?wait=true', { json: { kind: 'litter' } }));
    expect(failed).toMatchObject({ status: 502, body: { error: { code: 'ProviderPermanent' } } });
    // A second host appears: its host-bound queues join the board on the next refresh.
    await h.services.redis.zadd(h.services.keys.hosts(), Date.now(), 'host-b');
    await h.web.board!.refresh();
    expect(h.web.board!.queueNames()).toEqual(allQueueNames(['host-b', 'local']).sort());

    const context = await browser({ username: 'admin', password: PASSWORD });
    const page = await context.newPage();
    const overview = await page.goto(`${h.web.url}/admin/queues`, { waitUntil: 'domcontentloaded' });
    expect(overview?.status()).toBe(200);
    await page.getByText('persist@host-b').first().waitFor();
    const sidebar = await page.locator('body').innerText();
    for (const name of allQueueNames(['host-b', 'local'])) expect(sidebar).toContain(name);

    await page.goto(`${h.web.url}/admin/queues/queue/gc?status=failed`, { waitUntil: 'domcontentloaded' });
    await page.getByText('simulated outage for the board test').first().waitFor();
    const retry = page.locator('ul[class*="jobActions"] li').first().locator('button');
    await retry.hover();
    await page.getByText('Retry', { exact: true }).first().waitFor();
    const retried = page.waitForResponse((r) => r.request().method() === 'PUT' && /\/api\/queues\/gc\/[^/]+\/retry$/.test(new URL(r.url()).pathname));
    await retry.click();
    await page.getByText('Are you sure that you want to retry this job?').waitFor();
    await page.getByRole('button', { name: 'Confirm' }).click();
    const response = await retried;
    expect(response.status()).toBe(204);
    expect(response.request().headers().origin).toBe(new URL(h.web.url).origin);

    const queue = new Queue('gc', { connection: testConnection(h.config), prefix: h.services.keys.queuePrefix('gc') });
    addCleanup(() => queue.close());
    const [job] = await queue.getJobs(['completed', 'failed', 'waiting', 'active']);
    expect(job).toBeDefined();
    await waitFor('the retried gc job to complete', async () => ((await queue.getJobState(job!.id!)) === 'completed' ? true : undefined));
    expect(job!.id).toBeDefined();

    await page.goto(`${h.web.url}/admin/queues`, { waitUntil: 'domcontentloaded' });
    await page.getByText('persist@host-b').first().waitFor();
    await page.getByText('completed', { exact: false }).first().waitFor();
    const artifacts = path.join(ROOT, 'test-artifacts');
    await mkdir(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, 'bull-board.png') });
    await mkdir(path.join(ROOT, 'docs'), { recursive: true });
    await copyFile(path.join(artifacts, 'bull-board.png'), path.join(ROOT, 'docs', 'bull-board.png'));

    // Without credentials: a browser gets a 401 page with no board in it; the API gives no data.
    // (Chromium answers a basic-auth challenge it has no credentials for with ERR_INVALID_AUTH_CREDENTIALS.)
    const strangerContext = await browser();
    const stranger = await strangerContext.newPage();
    const refused = await stranger.goto(`${h.web.url}/admin/queues`, { waitUntil: 'domcontentloaded' }).then(
      (r) => String(r?.status()),
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/401|ERR_INVALID_AUTH_CREDENTIALS/);
    const strangerSees = await waitFor('the refused page to settle', () => stranger.content().catch(() => undefined));
    expect(strangerSees).not.toContain('persist@local');
    const viaBrowser = await strangerContext.request.get(`${h.web.url}/admin/queues/api/queues`);
    expect(viaBrowser.status()).toBe(401);
    expect(await viaBrowser.text()).not.toContain('persist@local');
    for (const target of ['/admin/queues', '/admin/queues/api/queues', '/admin/queues/static/js/main.f10757109b.js']) {
      const plain = await fetch(`${h.web.url}${target}`);
      const text = await plain.text();
      expect(plain.status, target).toBe(401);
      expect(text).not.toContain('persist@local');
      expect(plain.headers.get('www-authenticate')).toContain('Basic');
    }
    const wrong = await fetch(`${h.web.url}/admin/queues/api/queues`, { headers: { authorization: basic('admin', 'guess') } });
    expect(wrong.status).toBe(401);
    const wrongUser = await fetch(`${h.web.url}/admin/queues/api/queues`, { headers: { authorization: basic('root', PASSWORD) } });
    expect(wrongUser.status).toBe(401);

    // A cross-site write with valid credentials (what a forged request would carry) is refused.
    const forged = await fetch(`${h.web.url}/admin/queues/api/queues/gc/clean/completed`, { method: 'PUT', headers: { authorization: basic('admin', PASSWORD), origin: 'http://evil.example' } });
    expect(forged.status).toBe(403);
    expect(await queue.getJobState(job!.id!)).toBe('completed');
  });

  it('is on in fleet up with a generated password (kept across restarts), hostops queues included; FLEET_PUBLIC_URL is a same origin', { timeout: 240_000 }, async () => {
    const env = await testEnv({ FLEET_HTTP_PORT: '0', FLEET_PUBLIC_URL: 'https://fleet.example.com', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const start = async () => {
      const up = startFleet(['up'], env);
      addCleanup(() => killGroup(up.child, 'SIGKILL'));
      await up.waitForOutput(/board\s+http:\/\/\S+ \(user admin, password \S+, kept in \S+\)/, 60_000);
      const [, url, password, file] = /board\s+(http:\/\/\S+)\/admin\/queues \(user admin, password (\S+), kept in (\S+)\)/.exec(up.stdout())!;
      return { up, url: url!, password: password!, file: file! };
    };
    const first = await start();
    expect(first.file).toBe(path.join(env.FLEET_HOME!, 'admin-password'));
    expect((await readFile(first.file, 'utf8')).trim()).toBe(first.password);
    expect((await stat(first.file)).mode & 0o777).toBe(0o600);
    expect(first.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    // A hostops queue that holds a job (a foreign host's provider operation) is on the board too.
    const hostops = new Queue('hostops@local', { connection: testConnection(loadConfig(env)), prefix: fleetKeys(env.FLEET_PREFIX!, loadConfig(env).redis.keyLayout).queuePrefix('hostops@local') });
    addCleanup(() => hostops.close());
    await hostops.add('hostops', { op: 'nothing' });

    const context = await browser({ username: 'admin', password: first.password });
    const page = await context.newPage();
    const overview = await page.goto(`${first.url}/admin/queues`, { waitUntil: 'domcontentloaded' });
    expect(overview?.status()).toBe(200);
    await page.getByText('provision').first().waitFor();
    // The board's list refreshes every two heartbeats; the page shows it once reloaded and rendered.
    await waitFor('hostops@local on the board', async () => {
      await page.reload({ waitUntil: 'domcontentloaded' });
      await page.getByText('provision').first().waitFor();
      return (await page.locator('body').innerText()).includes('hostops@local') ? true : undefined;
    }, 90_000, 1_000);
    const sidebar = await page.locator('body').innerText();
    for (const name of ['provision', 'persist@local', 'checkpoint@local', 'gc', 'bake', 'backfill']) expect(sidebar).toContain(name);

    // Behind a proxy the browser's Origin is the public one, not the Host the request arrived with.
    const auth = { authorization: basic('admin', first.password) };
    const viaProxy = await fetch(`${first.url}/admin/queues/api/queues/gc/clean/completed`, { method: 'PUT', headers: { ...auth, origin: 'https://fleet.example.com' } });
    expect(viaProxy.status).toBe(200);
    const forged = await fetch(`${first.url}/admin/queues/api/queues/gc/clean/completed`, { method: 'PUT', headers: { ...auth, origin: 'https://evil.example.com' } });
    expect(forged.status).toBe(403);

    // Restarted, the same password.
    killGroup(first.up.child, 'SIGTERM');
    expect((await first.up.exited).code).toBe(0);
    const second = await start();
    expect(second.password).toBe(first.password);
    expect((await fetch(`${second.url}/admin/queues/api/queues`, { headers: auth })).status).toBe(200);
    killGroup(second.up.child, 'SIGTERM');
    expect((await second.up.exited).code).toBe(0);
  });

  it('is disabled (404) without FLEET_ADMIN_PASSWORD, and refuses writes (405) when FLEET_ADMIN_READONLY=true', async () => {
    const off = await createWebHarness();
    expect(off.web.board).toBeNull();
    // Off, it says so and how to turn it on (not "no route").
    for (const answered of [await fetch(`${off.web.url}/admin/queues`), await fetch(`${off.web.url}/admin/queues/api/queues`, { headers: { authorization: basic('admin', 'anything') } })]) {
      expect(answered.status).toBe(404);
      expect(await answered.json()).toMatchObject({ error: { code: 'BoardDisabled', message: expect.stringContaining('set FLEET_ADMIN_PASSWORD') } });
    }

    const ro = await createWebHarness({ FLEET_ADMIN_PASSWORD: PASSWORD, FLEET_ADMIN_READONLY: 'true' });
    const headers = { authorization: basic('admin', PASSWORD), origin: new URL(ro.web.url).origin };
    const list = await fetch(`${ro.web.url}/admin/queues/api/queues`, { headers });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { queues: { name: string; readOnlyMode: boolean }[] };
    expect(body.queues.map((q) => q.name).sort()).toEqual(allQueueNames(['local']).sort());
    expect(body.queues.every((q) => q.readOnlyMode)).toBe(true);
    expect((await fetch(`${ro.web.url}/admin/queues/api/queues/gc/pause`, { method: 'PUT', headers })).status).toBe(405);
  });
});
