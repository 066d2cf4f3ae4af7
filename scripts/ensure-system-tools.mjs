#!/usr/bin/env node
// The one place that makes sure the system tools the fleet shells out to are present:
// redis-server (embedded mode, tests), rsync (persist/restore) and, for tests, chromium and promtool. Runs before `npm start`
// and `npm test`. As root on a system with apt-get it installs what is missing, saying so in
// one line; otherwise it says exactly how to install them and exits non-zero.
import { execFileSync, spawnSync } from 'node:child_process';

// `--tests` adds what only the test suite needs: Chromium for the Bull Board browser test, promtool for the alert rules.
const TOOLS = [
  { bin: 'redis-server', apt: 'redis-server', brew: 'redis' },
  { bin: 'rsync', apt: 'rsync', brew: 'rsync' },
  // Namespaced local sandboxes (FLEET_LOCAL_ISOLATION); without it `auto` falls back to none with a warning.
  ...(process.platform === 'linux' ? [{ bin: 'bwrap', apt: 'bubblewrap', brew: 'bubblewrap' }] : []),
  ...(process.argv.includes('--tests')
    ? [
        { bin: 'chromium', apt: 'chromium', brew: '--cask chromium' },
        // promtool: the alert rules' check and unit tests (examples/prometheus).
        { bin: 'promtool', apt: 'prometheus', brew: 'prometheus' },
      ]
    : []),
];

/** @param {string} bin */
const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
const missing = TOOLS.filter((tool) => !has(tool.bin));
if (missing.length === 0) process.exit(0);

const names = missing.map((tool) => tool.bin).join(', ');
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (isRoot && has('apt-get')) {
  const packages = missing.map((tool) => tool.apt);
  console.error(`sandbox-fleet: installing missing system tools (${names}) with apt-get`);
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (error) {
    console.error(`sandbox-fleet: apt-get failed (${error instanceof Error ? error.message : String(error)}); install them yourself: apt-get install -y ${packages.join(' ')}`);
    process.exit(1);
  }
  const still = missing.filter((tool) => !has(tool.bin));
  if (still.length === 0) process.exit(0);
  console.error(`sandbox-fleet: still missing after apt-get: ${still.map((t) => t.bin).join(', ')}`);
  process.exit(1);
}
console.error(
  `sandbox-fleet: missing system tools: ${names}. Install them with ` +
    `\`apt-get install -y ${missing.map((t) => t.apt).join(' ')}\` (Debian/Ubuntu) or ` +
    `\`brew install ${missing.map((t) => t.brew).join(' ')}\` (macOS), then retry.`,
);
process.exit(1);
