// A Vercel restore of a format 2 revision (the real SDK against the loopback stand-in): packed
// straight from the archive's objects it brings back names, modes, times, symlinks and FIFOs as
// the sandbox had them; a revision holding a name that is not UTF-8 (which tar-stream cannot
// write) is materialised and packed by the host's tar instead, and that name comes back byte for
// byte. (That both paths write the same entries, times to the nanosecond included, is shown
// against the host's tar in pack-revision.test.ts.)
import { describe, expect, it } from 'vitest';
import { storedMtimeNs } from '../../src/tree/file-times.js';
import { createVercelHarness, vercelShell } from '../helpers/vercel-harness.js';

describe('Vercel restore of a format 2 revision', () => {
  it('streams a UTF-8 tree from the objects and falls back to tar for a name that is not UTF-8; both restore exactly', { timeout: 120_000 }, async () => {
    const { h } = await createVercelHarness();
    const vercel = h.services.providers.get('vercel');
    const { provision, sh } = vercelShell(h);
    // What a restore must give back: names (as hex, so bytes show), types, modes, sizes; and each
    // file's time as the fleet sets it (`storedMtimeNs`: through Node's double, cut to microseconds).
    const entries = (handle: string) => sh(handle, "find . -mindepth 1 ! -path './.fleet*' ! -name '.fleet*' -printf '%P|%y|%m|%s|%l\\n' | sort | od -An -tx1 | tr -d ' \\n'");
    const times = async (handle: string) =>
      (await sh(handle, "find . -type f ! -path './.fleet*' ! -name '.fleet*' -exec stat -c '%.9Y %n' {} + | sort -k2"))
        .trim()
        .split('\n')
        .map((line) => {
          const [seconds, fraction = ''] = line.slice(0, line.indexOf(' ')).split('.');
          return `${line.slice(line.indexOf(' ') + 1)} ${BigInt(seconds!) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9))}`;
        });
    const setup = [
      'mkdir -p src/deep empty && chmod 750 src/deep',
      'printf hello > src/deep/a.txt && chmod 640 src/deep/a.txt && touch -d "2021-03-04 05:06:07.123456789" src/deep/a.txt',
      'printf run > run.sh && chmod 755 run.sh && ln -s src/deep/a.txt link && mkfifo pipe',
      "printf 'ünïcödé' > 'ünï name.txt' && head -c 300000 /dev/zero > big.bin",
    ].join(' && ');

    for (const [workspaceId, extra] of [
      ['utf8', 'true'],
      ['latin1', "printf bytes > \"$(printf 'bad-\\377\\376.txt')\""],
    ] as const) {
      const first = await provision(workspaceId);
      await sh(first.handle, `${setup} && ${extra}`);
      await h.persist(workspaceId);
      const before = { entries: await entries(first.handle), times: (await times(first.handle)).map((t) => t.replace(/\d+$/, (ns) => String(storedMtimeNs(BigInt(ns))))) };
      await vercel.destroy(first.handle, AbortSignal.timeout(30_000));
      const restored = await provision(workspaceId);
      expect(restored.outcome).toBe('restored');
      expect(await entries(restored.handle), workspaceId).toBe(before.entries);
      // Times within a microsecond of what the fleet sets for the time it archived: the archive
      // holds the time as the sandbox's listing printed it, to the microsecond at best.
      const after = await times(restored.handle);
      expect(after.map((t) => t.replace(/ \d+$/, ''))).toEqual(before.times.map((t) => t.replace(/ \d+$/, '')));
      after.forEach((t, i) => expect(Math.abs(Number(BigInt(before.times[i]!.split(' ').pop()!) - BigInt(t.split(' ').pop()!)))).toBeLessThanOrEqual(1_000));
      if (workspaceId === 'latin1') expect(await sh(restored.handle, "cat \"$(printf 'bad-\\377\\376.txt')\"")).toBe('bytes');
      expect(await sh(restored.handle, 'cat link; stat -c %a src/deep')).toBe('hello750\n');
    }
  });
});
