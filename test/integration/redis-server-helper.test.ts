// The test helper that runs private redis-servers: a server whose port is already taken fails at
// once with its own output (not after a 15-s ping timeout), so a cluster can retry on new ports.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { RedisExitedError, RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/fleet-env.js';

describe('RedisServer (test helper)', () => {
  it('rejects with RedisExitedError naming the bind failure when its port is taken', async () => {
    const holder = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    addCleanup(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const port = (holder.address() as { port: number }).port;
    const server = new RedisServer(port, await tempDir('taken-port'), false);
    addCleanup(() => server.stop('SIGKILL'));
    const error = await server.start().then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(RedisExitedError);
    expect((error as RedisExitedError).detail).toMatch(/exit 1.*(in use|bind)/i);
  });
});
