// A restore through another host's hostops queue names a revision of either archive format.
import { describe, expect, it } from 'vitest';
import { archivePaths } from '../../src/archive/archive-paths.js';
import { hostOpPayloadFor } from '../../src/hostops/host-op-rules.js';

const ROOT = '/srv/archive';
const REVISION = 'r20261202T001916987Z-g1-abc123';
const rules = hostOpPayloadFor({ hostId: 'host-b', archiveRoot: ROOT });
const importFrom = (from: string) => rules.safeParse({ op: 'importTree', handle: 'local:host-b:ws:g1', args: { from } });

describe('hostops importTree source', () => {
  it('accepts a format 1 revision directory and a format 2 record of the handle\'s workspace', () => {
    expect(importFrom(archivePaths(ROOT, 'ws').revision(REVISION)).success).toBe(true);
    expect(importFrom(archivePaths(ROOT, 'ws').record(REVISION)).success).toBe(true);
  });

  it('refuses another workspace\'s record and paths outside the archive', () => {
    for (const from of [archivePaths(ROOT, 'victim').record(REVISION), `${archivePaths(ROOT, 'ws').record(REVISION)}/..`, '/etc/passwd']) {
      const result = importFrom(from);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual(['args', 'from']);
    }
  });
});
