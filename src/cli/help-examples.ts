/** The `Examples:` section of each command's `--help` (by command path), shown after its options. */
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  up: ['fleet up                                  # embedded Redis under ./.fleet, every worker, web and board', 'REDIS_URL=redis://:pw@redis:6379 fleet up   # against your Redis'],
  worker: ['fleet worker --queues persist,checkpoint    # the host-bound queues of this host', 'fleet worker --queues persist --host vercel  # persist@vercel'],
  status: ['fleet status', 'fleet status --json | jq .data.unservedQueues'],
  provision: ['fleet provision ws-1 --wait', 'fleet provision ws-1 --provider vercel --wait --json'],
  exec: ["fleet exec ws-1 -- sh -c 'ls -la'", 'echo hello | fleet exec ws-1 -i -- cat > greeting.txt', 'fleet exec ws-1 --timeout 60000 -- npm test'],
  persist: ['fleet persist ws-1 --wait                                   # upload-only, progress on stderr', 'fleet persist ws-1 --delete --reason turn-end --turn t-42 --wait'],
  history: ['fleet history ws-1', 'fleet history ws-1 --json | jq -r .data.revisions[0].revision'],
  rollback: ['fleet rollback ws-1 r20261130T101530123Z-g3-k7f2q9 --wait   # a revision id from fleet history ws-1'],
  verify: ['fleet verify ws-1', 'fleet verify --all --read-data-subset 5%'],
  gc: ['fleet gc --dry-run', 'fleet gc --kind retention'],
  queues: ['fleet queues pause persist --host host-a', 'fleet queues retry-failed gc', 'fleet queues clean provision --state completed --grace 3600000'],
  top: ['fleet top', 'fleet top --once', 'fleet top --interval 500 > top.log'],
  export: ['fleet export ws-1 --to ./ws-1-tree', 'fleet export ws-1 --revision r20261130T101530123Z-g3-k7f2q9 --tar ws-1.tar'],
  files: ['fleet files ls ws-1 src', 'fleet files get ws-1 src/index.ts', "fleet files put ws-1 notes.md --content '# notes'"],
  bake: ['fleet bake examples/base-manifest.json --wait --activate'],
  backfill: ['fleet backfill sweep --source native --rate 2 --batch 10 --wait', 'fleet backfill status'],
});
