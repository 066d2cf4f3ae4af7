import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
const session = new Session(); session.connect();
import { ObjectStore } from '../src/archive/object-store.js';
import { StoreBuilder } from '../src/archive/store-builder.js';
import { DirHandle } from '../src/tree/dir-handle.js';
import { UNLIMITED_TREE } from '../src/tree/tree-limits.js';
import { changeFiles, planTree, writeTree } from '../bench/lib/workspace-tree.js';

const files = Number(process.argv[2] ?? 10000);
const dir = await mkdtemp(path.join(os.tmpdir(), 'prof-'));
const live = path.join(dir, 'live');
const plan = planTree({ files, totalBytes: files * 13000 });
await writeTree(live, plan);
const store = new ObjectStore(path.join(dir, 'archive'));
const signal = new AbortController().signal;
async function build(basis: { root: string; scanStartedAt: bigint } | null, cache: any) {
  const src = await DirHandle.open(live);
  const start = process.hrtime.bigint(); const wall = BigInt(Date.now()) * 1000000n;
  const b = new StoreBuilder({ store, basis, cache, keepMissing: false, limits: UNLIMITED_TREE, signal });
  const root = await b.build(src);
  await src.close();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { root, ms, b, start: wall };
}
let r = await build(null, null);
console.log('first', r.ms.toFixed(0));
await session.post('Profiler.enable'); let profiling = false;
for (let turn = 1; turn <= Number(process.argv[3] ?? 5); turn++) {
  await new Promise((res) => setTimeout(res, 1100));
  await changeFiles(live, plan, 0.01, turn);
  await new Promise((res) => setTimeout(res, 1100));
  const cache = new Map(r.b.cacheEntries.map((e) => [e.path, e]));
  const basis = { root: r.root, scanStartedAt: r.start - 0n };
  if (turn === 3) { await session.post('Profiler.start'); profiling = true; }
  r = await build(basis, cache);
  console.log('turn', turn, r.ms.toFixed(0), 'hashed', r.b.hashedFiles, 'newTrees', r.b.newTrees);
}
if (profiling) { const { profile } = await session.post('Profiler.stop'); writeFileSync('/work/main/.scratch/turns.cpuprofile', JSON.stringify(profile)); }
await rm(dir, { recursive: true, force: true });
