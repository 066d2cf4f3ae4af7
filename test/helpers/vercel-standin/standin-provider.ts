// Builds the real Vercel provider (real SDK) pointed at a stand-in through Config, exactly as
// production does: FLEET_VERCEL_* variables → loadConfig → createVercelProvider. FLEET_HOME (and
// so the host-side mirrors) is a temporary directory removed after the test.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config.js';
import { removeTree } from '../../../src/tree/remove-tree.js';
import { addCleanup } from '../cleanup.js';
import { createVercelProvider, type VercelProvider, type VercelProviderOptions } from '../../../src/providers/vercel/vercel-provider.js';
import { standinEnv } from './standin-env.js';
import type { VercelStandin } from './vercel-standin.js';

export function standinProvider(standin: VercelStandin, options: Partial<Omit<VercelProviderOptions, 'connection'>> = {}, overrides: Record<string, string> = {}): VercelProvider {
  const home = mkdtempSync(path.join(tmpdir(), 'standin-fleet-home-'));
  addCleanup(() => removeTree(home));
  const config = loadConfig({
    FLEET_HOME: home,
    ...standinEnv(standin),
    ...overrides,
  });
  return createVercelProvider(config, { pollIntervalMs: 20, ...options });
}
