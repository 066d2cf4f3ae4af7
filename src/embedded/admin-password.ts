/**
 * Bull Board's password for the embedded `fleet up` when none is configured: generated once
 * (144 random bits, base64url), kept in `<FLEET_HOME>/admin-password` (mode 0600) so it stays the
 * same across restarts. The file is opened without following a symlink and must be a small
 * regular file holding one password of at least the minimum length, else start-up fails naming it.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors/config-error.js';
import { MIN_ADMIN_PASSWORD_CHARS } from '../config/config-rules.js';

export const ADMIN_PASSWORD_FILE = 'admin-password';
const MAX_BYTES = 1_024;
const PASSWORD = new RegExp(`^[\\x21-\\x7e]{${MIN_ADMIN_PASSWORD_CHARS},512}$`);

export interface AdminPassword {
  readonly password: string;
  readonly file: string;
  /** Whether this call created it. */
  readonly generated: boolean;
}

async function readPassword(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP') throw new ConfigError('FLEET_ADMIN_PASSWORD', `${file} to be a regular file, not a symbolic link (delete it to have a new one generated)`, 'a symbolic link');
    throw error;
  });
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MAX_BYTES) throw new ConfigError('FLEET_ADMIN_PASSWORD', `${file} to be a regular file of at most ${MAX_BYTES} bytes holding the board password (delete it to have a new one generated)`, `${stat.size} bytes`);
    const password = (await handle.readFile('utf8')).trim();
    if (!PASSWORD.test(password)) throw new ConfigError('FLEET_ADMIN_PASSWORD', `${file} to hold one password of ${MIN_ADMIN_PASSWORD_CHARS}-512 printable characters without spaces (delete it to have a new one generated)`, '(unusable content)');
    return password;
  } finally {
    await handle.close();
  }
}

/** The board password kept under `home`, created on first use. */
export async function ensureAdminPassword(home: string): Promise<AdminPassword> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  const file = path.join(home, ADMIN_PASSWORD_FILE);
  const password = randomBytes(18).toString('base64url');
  try {
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await handle.writeFile(`${password}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return { password, file, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { password: await readPassword(file), file, generated: false };
  }
}
