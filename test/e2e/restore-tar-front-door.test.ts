// The local restore through the host's tar, driven through `fleet up` and the CLI: a tree with
// every kind of entry (a read-only directory, a name with a control byte, a symlink out, a FIFO,
// a large file and a hard link to it, restrictive modes) is persisted, its host is lost, and
// `fleet provision` restores it exactly; a wrapper on PATH shows tar did the restore, as the
// workspace's uid (never root). With a tar
// that fails midway (as on a full disk), the restore still comes back exact, made the other way,
// and `fleet up` logs why.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { providerTestEnv, startLosableFleetUp } from '../helpers/fleet-up.js';
import { runFleet } from '../helpers/processes.js';
import { storedMtimeNs } from '../../src/tree/file-times.js';

const REAL_TAR = execFileSync('sh', ['-c', 'command -v tar'], { encoding: 'utf8' }).trim();

// Type, mode, owner, size, content digest, target, mtime and hard-link groups of everything under
// `dir`, times through `time` (a restore sets them as Node does: storedMtimeNs).
async function describeTree(dir: string, time: (ns: bigint) => bigint = (ns) => ns): Promise<string[]> {
  const lines: string[] = [];
  const inodes = new Map<bigint, string>();
  const walk = async (rel: Buffer): Promise<void> => {
    for (const name of (await readdir(rel.length ? Buffer.concat([Buffer.from(`${dir}/`), rel]) : dir, { encoding: 'buffer' })).sort(Buffer.compare)) {
      const childRel = rel.length ? Buffer.concat([rel, Buffer.from('/'), name]) : name;
      const full = Buffer.concat([Buffer.from(`${dir}/`), childRel]);
      const st = await lstat(full, { bigint: true });
      let what = '';
      if (st.isFile()) {
        const first = st.nlink > 1n ? inodes.get(st.ino) : undefined;
        if (st.nlink > 1n && first === undefined) inodes.set(st.ino, childRel.toString('hex'));
        what = `${createHash('sha256').update(await readFile(full)).digest('hex')} ${time(st.mtimeNs)} link:${first ?? '-'}`;
      } else if (st.isSymbolicLink()) what = (await readlink(full, { encoding: 'buffer' })).toString('hex');
      else if (st.isFIFO()) what = `fifo ${time(st.mtimeNs)}`;
      lines.push(`${childRel.toString('hex')} ${st.mode.toString(8)} ${st.uid} ${st.size} ${what}`);
      if (st.isDirectory()) await walk(childRel);
    }
  };
  await walk(Buffer.alloc(0));
  return lines;
}

describe('local restore through tar, through the front door', () => {
  for (const broken of [false, true]) {
    it(broken ? 'a tar that fails midway: the restore is still exact, made the other way, and logged' : 'a lost host: fleet provision restores the tree exactly, through tar', { timeout: 240_000 }, async () => {
      // The restore's tar runs as the workspace's uid (namespaced here): the wrapper and its logs must be the uid's to use.
      const bin = await tempDir('tar-wrapper');
      await chmod(bin, 0o755);
      const calls = path.join(bin, 'calls.log');
      const uids = path.join(bin, 'uids.log');
      for (const log of [calls, uids]) await writeFile(log, '', { mode: 0o666 }).then(() => chmod(log, 0o666));
      const failing = broken ? `case "$*" in *"-x "*) head -c 8192 > /dev/null; echo "tar: simulated: No space left on device" >&2; exit 2;; esac\n` : '';
      await writeFile(path.join(bin, 'tar'), `#!/bin/sh\necho "$*" >> '${calls}'\ncase "$*" in *"-x "*) id -u >> '${uids}';; esac\n${failing}exec '${REAL_TAR}' "$@"\n`, { mode: 0o755 });
      const { env } = await providerTestEnv('local', { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, FLEET_CHECKPOINT_INTERVAL_MS: '3600000' });
      const up = await startLosableFleetUp(env);
      const fleet = async (args: string[]) => {
        const run = await runFleet(args, env);
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
        return run.stdout;
      };
      const ws = broken ? 'tar-broken' : 'tar-restore';
      await fleet(['provision', ws, '--wait']);
      await fleet([
        'exec', ws, '--', 'sh', '-c',
        [
          'mkdir -p src/lib empty ro/inner',
          'for i in $(seq 1 40); do echo "file $i" > src/lib/f$i.js; done',
          "printf 'odd' > \"$(printf 'name\\001with\\nbytes')\"",
          'ln -s /etc/passwd out-link && mkfifo pipe',
          'head -c 400000 /dev/urandom > big.bin && ln big.bin big-again.bin',
          'echo secret > private && chmod 0400 private && chmod 0751 src',
          'echo kept > ro/inner/kept && chmod 0555 ro/inner && chmod 0500 ro',
        ].join(' && '),
      ]);
      await fleet(['persist', ws, '--delete', '--wait']);
      const live = path.join(env.FLEET_HOME!, 'live', ws, 'root');
      const before = await describeTree(live, storedMtimeNs);
      expect(before.length).toBeGreaterThan(45);

      await up.lose([ws], null);
      expect(existsSync(live)).toBe(false);
      await fleet(['provision', ws, '--wait']);
      expect(await describeTree(live)).toEqual(before);

      const extractions = readFileSync(calls, 'utf8').split('\n').filter((line) => line.startsWith('-x ') && line.includes('/proc/self/fd/3'));
      expect(extractions.length).toBeGreaterThanOrEqual(1);
      // Namespaced: each extracting tar ran as the workspace's uid, never as root.
      const ranAs = readFileSync(uids, 'utf8').trim().split('\n');
      expect(ranAs.length).toBe(extractions.length);
      expect(ranAs.every((uid) => /^\d+$/.test(uid) && uid !== '0'), ranAs.join(',')).toBe(true);
      // The workers log to fleet up's stderr.
      if (broken) await up.waitForOutput('restore through tar failed; the revision was materialised instead', 30_000, 'stderr');
    });
  }
});
