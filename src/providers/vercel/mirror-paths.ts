/**
 * Layout of the host-side mirrors of Vercel sandbox trees, one per workspace, under
 * `FLEET_VERCEL_MIRROR_ROOT` (default `$FLEET_HOME/vercel-mirrors`; every directory 0700, outside
 * every sandbox's view):
 *
 *   {root}/{key}/tree/             the mirror: the sandbox's tree as of the last persist (what persist walks)
 *   {root}/{key}/index.json        which sandbox, boot and file versions the mirror holds (mirror-index.ts)
 *   {root}/{key}/stat-cache.json   the archive's stat cache of the mirror (`TreeSource.statCache`)
 *   {root}/{key}/staging/          files of a delta being written, renamed into tree/ when complete
 *   {root}/{key}/lock/             held while a persist uses the mirror (mirror-lock.ts)
 *   {root}/{key}/listed-index.json the file versions a revision holds, for a persist without the mirror (listed-index.ts)
 *
 * `key` is the workspace's durable sandbox name (a legacy name without its `-g<generation>`
 * suffix), so a workspace's next incarnation reuses (and corrects) the same directory instead of
 * leaving one per generation behind; the index names the incarnation (the handle) it holds.
 */
import path from 'node:path';
import { parseVercelHandle } from './vercel-handle.js';

export interface MirrorPaths {
  readonly dir: string;
  readonly tree: string;
  readonly index: string;
  readonly statCache: string;
  readonly staging: string;
  readonly lock: string;
  readonly listedIndex: string;
}

/** The mirror directory key of a handle: its durable name (`vercel:fleet-ws:g3` → `fleet-ws`; legacy `fleet-ws-g3` → `fleet-ws`). */
export function mirrorKey(handle: string): string {
  const incarnation = parseVercelHandle(handle);
  if (incarnation === null) throw new RangeError(`not a Vercel sandbox handle: ${JSON.stringify(handle)}`);
  return incarnation.durable ? incarnation.name : (/^(fleet-.+)-g\d{1,16}$/.exec(handle)?.[1] ?? handle);
}

export function mirrorPaths(root: string, handle: string): MirrorPaths {
  const dir = path.join(root, mirrorKey(handle));
  return {
    dir,
    tree: path.join(dir, 'tree'),
    index: path.join(dir, 'index.json'),
    statCache: path.join(dir, 'stat-cache.json'),
    staging: path.join(dir, 'staging'),
    lock: path.join(dir, 'lock'),
    listedIndex: path.join(dir, 'listed-index.json'),
  };
}
