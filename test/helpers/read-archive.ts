// Runs examples/read-archive.py (the stdlib-only reader written from docs/archive-format.md) on
// an archive root, and reads a revision the way that reader sees it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import type { ManifestEntry } from '../../src/archive/manifest.js';
import { tempDir } from './fleet-env.js';
import { describeTree, type EntryFacts } from './portable-tree.js';
import { ROOT } from './processes.js';

const READER = path.join(ROOT, 'examples', 'read-archive.py');

/** Runs the reader on `archiveRoot`; returns its exit code and output. */
export function runReader(archiveRoot: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync('python3', [READER, archiveRoot, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The reader's `list --json` of `args` (`WORKSPACE [--revision R]`). */
export function readerListing(archiveRoot: string, args: readonly string[]): { format: number; entries: ManifestEntry[] } {
  const result = runReader(archiveRoot, [...args, 'list', '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { format: number; entries: ManifestEntry[] };
}

/** A revision as the reader sees it: its listing, and the tree it extracts (names, modes, contents, hard links, targets, ns times). */
export async function readerView(archiveRoot: string, workspaceId: string, revision: string): Promise<{ format: number; entries: ManifestEntry[]; tree: Map<string, EntryFacts> }> {
  const { format, entries } = readerListing(archiveRoot, [workspaceId, '--revision', revision]);
  const dest = path.join(await tempDir('reader-view'), 'tree');
  const extracted = runReader(archiveRoot, [workspaceId, '--revision', revision, 'extract', dest]);
  expect(extracted.code, extracted.stderr).toBe(0);
  return { format, entries, tree: await describeTree(dest) };
}
