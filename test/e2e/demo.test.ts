// `npm run demo` runs to completion and its summary shows the restored files.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, spawnTracked } from '../helpers/processes.js';

describe('npm run demo', () => {
  it('bakes, provisions, persists, restores, rolls back and summarises', { timeout: 300_000 }, async () => {
    const demo = spawnTracked(process.execPath, [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'scripts', 'demo.ts')], { env: {} });
    const { code } = await demo.exited;
    expect(code, demo.stdout().slice(-3000)).toBe(0);
    const out = demo.stdout();
    expect(out).toContain('alice: restored from');
    expect(out).toContain('restored files: alice/notes.md = "a second draft" (restored)');
    expect(out).toMatch(/bob\s+1\s+created-from-base/);
    expect(out).toMatch(/dashboard: http:\/\/127\.0\.0\.1:\d+\/admin\/queues/);
  });
});
