// chownTree gives a whole tree to a uid by directory handles: nothing a symlink points at is
// touched, modes stay exactly as they were (setuid/setgid put back after the kernel clears them),
// mode-000 entries and FIFOs included.
import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chownTree } from '../../src/tree/chown-tree.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { tempDir } from '../helpers/fleet-env.js';

const UID = 288_888;

describe('chownTree', () => {
  it.skipIf(process.getuid?.() !== 0)('changes every entry and nothing outside, keeping every mode', async () => {
    const outside = await tempDir('chown-outside');
    await writeFile(path.join(outside, 'target.txt'), 'not yours');
    const root = await tempDir('chown-tree');
    await mkdir(path.join(root, 'sub', 'deep'), { recursive: true });
    await writeFile(path.join(root, 'sub', 'deep', 'tool'), '#!/bin/sh\n');
    await chmod(path.join(root, 'sub', 'deep', 'tool'), 0o4755);
    await chmod(path.join(root, 'sub'), 0o2775);
    await writeFile(path.join(root, 'locked'), 'x');
    await chmod(path.join(root, 'locked'), 0o000);
    await symlink(path.join(outside, 'target.txt'), path.join(root, 'escape'));
    await symlink(outside, path.join(root, 'escape-dir'));
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const modes = async () => {
      const out: Record<string, number> = {};
      for (const rel of ['', 'sub', 'sub/deep', 'sub/deep/tool', 'locked', 'escape', 'pipe']) out[rel] = (await lstat(path.join(root, rel))).mode & 0o7777;
      return out;
    };
    const before = await modes();
    const dir = await DirHandle.open(root);
    try {
      expect(await chownTree(dir, UID, UID)).toBe(8);
    } finally {
      await dir.close();
    }
    expect(await modes()).toEqual(before);
    expect(before['sub/deep/tool']).toBe(0o4755);
    for (const rel of ['', 'sub', 'sub/deep', 'sub/deep/tool', 'locked', 'escape', 'escape-dir', 'pipe']) {
      const stats = await lstat(path.join(root, rel));
      expect({ rel, uid: stats.uid, gid: stats.gid }).toEqual({ rel, uid: UID, gid: UID });
    }
    // What the links point at is untouched.
    expect((await lstat(path.join(outside, 'target.txt'))).uid).toBe(0);
    expect((await lstat(outside)).uid).toBe(0);
  });
});
