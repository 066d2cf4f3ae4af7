/**
 * List, stat and remove on a live tree, as fixed commands run *in the sandbox* through the
 * provider's own exec: they act with exactly the sandbox's authority and see only what it sees
 * (namespaced local sandboxes: the workspace's uid with only its tree in view; Vercel: its VM), so
 * a symlink an agent planted resolves inside the sandbox, never on the host. Each command runs
 * with its cwd set to the directory it acts in, which the provider opens beneath the tree's root
 * by handles (never following a symlink, local), and names one entry of that directory
 * (`./name`, as an argv element, never through a shell): so even an unsandboxed local command
 * (FLEET_LOCAL_ISOLATION=none) resolves no path through a symlink. `find -P` and `rm` never
 * follow the symlink they are given. Output is NUL-separated.
 */
import type { ExecResult } from '../providers/sandbox-provider.js';
import type { EntryType, TreeEntry } from './workspace-io.js';

/** Fields per entry: type, size, mode (octal), mtime (epoch s), name relative to the start, link target. */
const FORMAT = '%y\\0%s\\0%m\\0%T@\\0%P\\0%l\\0';
const FIELDS = 6;

const TYPE: Record<string, EntryType> = { f: 'file', d: 'dir', l: 'symlink' };

/** Where a command runs (the parent of the entry, `''` = the root) and the entry it names there (`.` = that directory). */
export interface CommandSite {
  readonly cwd: string;
  readonly name: string;
}

/** The site of `parts` (an entry) in its parent; the root is `.` of itself. */
export function siteOf(parts: readonly string[]): CommandSite {
  if (parts.length === 0) return { cwd: '', name: '.' };
  return { cwd: parts.slice(0, -1).join('/'), name: `./${parts.at(-1)!}` };
}

/** `find` of the entry itself (stat). */
export const statCommand = (site: CommandSite): string[] => ['find', '-P', site.name, '-maxdepth', '0', '-printf', FORMAT];
/** `find` of the children of the cwd (list; run with the listed directory as cwd). */
export const listCommand = (): string[] => ['find', '-P', '.', '-mindepth', '1', '-maxdepth', '1', '-printf', FORMAT];
/** Removes a file, a symlink (not its target) or a directory with everything below it. */
export const removeCommand = (site: CommandSite): string[] => ['rm', '-rf', '--', site.name];

/** The entries of a `find -printf FORMAT` answer; `base` is the path the command started at. */
export function parseEntries(stdout: string, base: string): TreeEntry[] {
  const fields = stdout.split('\0');
  const entries: TreeEntry[] = [];
  for (let i = 0; i + FIELDS <= fields.length; i += FIELDS) {
    const [type, size, mode, mtime, name, target] = fields.slice(i, i + FIELDS) as [string, string, string, string, string, string];
    const path = name === '' ? base : base === '' ? name : `${base}/${name}`;
    const kind = TYPE[type] ?? 'other';
    entries.push({
      path,
      type: kind,
      size: kind === 'file' ? Number(size) : 0,
      mode: kind === 'symlink' ? 0 : Number.parseInt(mode, 8) || 0,
      mtime: new Date(Math.floor(Number(mtime) * 1000) || 0).toISOString(),
      ...(kind === 'symlink' ? { target } : {}),
    });
  }
  return entries;
}

/** Whether a `find` answer says the start path does not exist (exit 1, nothing printed). */
export const missing = (result: ExecResult): boolean => result.exitCode !== 0 && result.stdout === '';
