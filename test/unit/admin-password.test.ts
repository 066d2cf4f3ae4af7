import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureAdminPassword } from '../../src/embedded/admin-password.js';
import { tempDir } from '../helpers/fleet-env.js';

describe('the generated board password', () => {
  it('is created once (0600) and read back the same', async () => {
    const home = path.join(await tempDir('admin-pw'), '.fleet');
    const first = await ensureAdminPassword(home);
    expect(first).toMatchObject({ generated: true, file: path.join(home, 'admin-password') });
    expect(first.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect((await stat(first.file)).mode & 0o777).toBe(0o600);
    const again = await ensureAdminPassword(home);
    expect(again).toEqual({ ...first, generated: false });
  });

  it('never follows a symlink, and refuses a file that holds no usable password, naming it', async () => {
    const home = await tempDir('admin-pw');
    const secret = path.join(home, 'elsewhere');
    await writeFile(secret, 'a-long-enough-password\n');
    await symlink(secret, path.join(home, 'admin-password'));
    await expect(ensureAdminPassword(home)).rejects.toThrow(/admin-password to be a regular file, not a symbolic link .*got "a symbolic link"/);
    expect(await readFile(secret, 'utf8')).toBe('a-long-enough-password\n');

    const short = await tempDir('admin-pw');
    await writeFile(path.join(short, 'admin-password'), 'short\n');
    await expect(ensureAdminPassword(short)).rejects.toThrow(/FLEET_ADMIN_PASSWORD: expected .*admin-password to hold one password of 12-512 printable characters/);
    const dir = await tempDir('admin-pw');
    await mkdir(path.join(dir, 'admin-password'));
    await expect(ensureAdminPassword(dir)).rejects.toThrow(/admin-password to be a regular file/);
  });
});
