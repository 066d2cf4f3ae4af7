/**
 * The scheduled integrity check (`verify`, daily by default): `fleet verify --all
 * --read-data-subset P%` as a GC job, P = FLEET_VERIFY_READ_DATA_PCT, each run re-reading the next
 * slice of the object id space (the rotation lives in Redis, so runs on any worker continue it).
 * A check, not a collection: nothing is removed; each problem is an item of the result and a
 * warning in the log.
 */
import { windowLabel, windowWidth } from '../archive/id-window.js';
import { knownWorkspaces } from '../archive/known-workspaces.js';
import { verifyRevisions } from '../archive/verify-revisions.js';
import type { GcKindRunner } from './gc-kind.js';

export const verifyKind: GcKindRunner = {
  readOnly: true,
  async plan(ctx) {
    const { archive, checkpoints, addresses, config, logger, verifyCursor } = ctx.deps;
    const readData = await verifyCursor.claim(windowWidth(config.verify.readDataPct));
    const workspaces = await knownWorkspaces(archive, addresses);
    const { checks, problems, attached, store } = await verifyRevisions({ archive, history: checkpoints }, workspaces, { readData, missingFormat: config.archiveFormat, signal: ctx.signal });
    const { from, to } = windowLabel(readData);
    for (const p of problems) logger.warn({ kind: 'verify', workspaceId: p.workspaceId, revision: p.revision, problem: p.problem, object: p.object, detail: p.detail }, 'verify found a problem');
    ctx.note({ workspaces: workspaces.length, revisions: checks.length, attached, trees: store.trees, objects: store.objects, objectsRead: store.objectsRead, bytesRead: store.bytesRead, readDataPct: config.verify.readDataPct, readDataFrom: from, readDataTo: to, problems: problems.length });
    logger.info({ kind: 'verify', revisions: checks.length, objectsRead: store.objectsRead, readDataFrom: from, readDataTo: to, problems: problems.length }, 'verify finished');
    return problems.slice(0, ctx.limit).map((p) => ({ id: p.object ?? p.revision ?? p.workspaceId, workspaceId: p.workspaceId, description: `${p.problem} in ${p.revision ?? '(no revision)'}: ${p.detail}`, bytes: 0 }));
  },
  async apply(_ctx, planned) {
    return [...planned];
  },
};
