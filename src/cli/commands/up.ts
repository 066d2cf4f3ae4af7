/** `fleet up`: embedded Redis if needed + every worker in one process, until a signal. */
import type { Command } from 'commander';
import { withAdminPassword, withRedisUrl, type Config } from '../../config.js';
import { ensureAdminPassword } from '../../embedded/admin-password.js';
import { maybeStartTracing } from '../../observability/maybe-start-tracing.js';
import { startEmbeddedRedis } from '../../embedded/embedded-redis.js';
import { QUEUE_NAMES } from '../../queues/index.js';
import { providerHostsInUse } from '../../providers/provider-hosts.js';
import { startFleetProcess } from '../../app/fleet-process.js';
import { Releasers } from '../../runtime/releasers.js';
import { installShutdownHandlers } from '../../runtime/shutdown.js';
import { assertSystemTools } from '../../system-tools.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { redactedRedisUrl, redisResolved, redisTargetAddress } from '../../redis.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

// The generated board password of a fleet up whose web side only listens on loopback (no API
// tokens, or a loopback FLEET_HTTP_HOST) and has no FLEET_ADMIN_PASSWORD; null otherwise.
async function boardPassword(config: Config) {
  if (config.admin.password) return null;
  const loopbackOnly = config.http.apiTokens.length === 0 || LOOPBACK_HOSTS.has(config.http.host);
  return loopbackOnly ? ensureAdminPassword(config.paths.home) : null;
}

export function registerUp(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('up')
    .description('start the whole fleet in this process (embedded Redis when REDIS_URL is unset)')
    .option('--json', 'print the component addresses as JSON')
    .action((opts: { json?: boolean }) =>
      run(async () => {
        const base = ctx.config();
        const embeddedRedis = !redisResolved(base.redis);
        await assertSystemTools(embeddedRedis ? ['redis-server', 'rsync'] : ['rsync'], base.systemPath);
        const logger = ctx.logger({ component: 'fleet-up', hostId: base.hostId });
        const releasers = new Releasers();
        try {
          // Released last (newest first): the shutdown's own spans are flushed too.
          const tracing = await maybeStartTracing(base);
          if (tracing) releasers.add('tracing', () => tracing.shutdown());
          // With cluster nodes, REDIS_URL is not used.
          let url = base.redis.clusterNodes !== null ? null : base.redis.url;
          let redisNote = base.redis.clusterNodes !== null ? 'cluster' : 'external';
          if (embeddedRedis) {
            const embedded = await startEmbeddedRedis({ home: base.paths.home, logger, systemPath: base.systemPath });
            releasers.add('embedded redis', () => embedded.stop());
            url = embedded.url;
            redisNote = `embedded${embedded.adopted ? ', adopted' : ''}, data ${embedded.state.dataDir}`;
          }
          // The board is on in a loopback-only fleet up: with a generated password when none is set.
          const board = await boardPassword(base);
          const withBoard = board ? withAdminPassword(base, board.password) : base;
          const config = url === null ? withBoard : withRedisUrl(withBoard, url);
          // Every host-bound queue a provider in use needs: this host's, and persist@vercel / checkpoint@vercel.
          const fleet = await startFleetProcess({ config, queues: QUEUE_NAMES, hosts: [config.hostId, ...providerHostsInUse(config)], logger });
          releasers.add('workers', () => fleet.close());
          // Loaded on demand: the web stack (Hono, Bull Board, prom-client) is heavy for other commands.
          const { startWebServer } = await import('../../app/start-web-server.js');
          // One set of connections and stores for the whole process: the web side uses the workers'.
          const web = await startWebServer({ config, logger, services: fleet.services });
          releasers.add('web', () => web.close());
          const redisShown = url === null ? redisTargetAddress(config.redis) : redactedRedisUrl(url);
          const components = {
            pid: process.pid,
            redis: { url: redisShown, mode: redisNote },
            workers: { queues: fleet.workers.queueNames, concurrency: config.worker.concurrency ?? 'per queue', hostId: config.hostId },
            web: web.url,
            board: web.board ? `${web.url}/admin/queues` : null,
            boardPasswordFile: board?.file ?? null,
            archive: config.paths.archiveRoot,
            live: config.paths.liveRoot,
          };
          printResult(ctx.io, Boolean(opts.json), components, () =>
            table(
              ['component', 'address'],
              [
                ['process', `pid ${process.pid}, host ${config.hostId}`],
                ['redis', `${redisShown} (${redisNote})`],
                ['workers', `${fleet.workers.queueNames.join(', ')} (concurrency ${config.worker.concurrency ?? 'per queue'})`],
                ['web', web.url],
                ['board', !web.board ? 'disabled (set FLEET_ADMIN_PASSWORD)' : board ? `${web.url}/admin/queues (user admin, password ${board.password}, kept in ${board.file})` : `${web.url}/admin/queues (user admin, FLEET_ADMIN_PASSWORD)`],
                ['archive', config.paths.archiveRoot],
                ['live', config.paths.liveRoot],
              ],
            ),
          );
          return await new Promise<number>((resolve) => {
            installShutdownHandlers({
              logger,
              deadlineMs: config.shutdown.graceMs + config.shutdown.flushMs + 5_000,
              shutdown: () => releasers.releaseAll(),
              exit: resolve,
            });
          });
        } catch (error) {
          await releasers.releaseAll().catch(() => undefined);
          throw error;
        }
      }),
    );
}
