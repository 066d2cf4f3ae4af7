/**
 * Every benchmark `npm run bench` knows: one line each, loaded only when it runs. To add one,
 * write `bench/<name>.ts` exporting `default` (a `Benchmark`) and add its line here.
 */
import type { Benchmark } from './lib/report.js';

export const BENCHMARKS: Readonly<Record<string, () => Promise<{ default: Benchmark }>>> = {
  queue: () => import('./queue.js'),
  persist: () => import('./persist.js'),
  coalesce: () => import('./coalesce.js'),
  memory: () => import('./memory.js'),
  provision: () => import('./provision.js'),
  'provision-from-base': () => import('./provision-from-base.js'),
  backfill: () => import('./backfill.js'),
  dedup: () => import('./dedup.js'),
  'sandbox-exec': () => import('./sandbox-exec.js'),
  'vercel-persist': () => import('./vercel-persist.js'),
  'vercel-restore': () => import('./vercel-restore.js'),
  'vercel-patches': () => import('./vercel-patches.js'),
  'loss-window': () => import('./loss-window.js'),
  capacity: () => import('./capacity.js'),
  'key-split': () => import('./key-split.js'),
  restore: () => import('./restore.js'),
};
