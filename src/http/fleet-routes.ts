/** Fleet-wide routes: bake a base snapshot, collect garbage, backfill from a legacy store. */
import { BackfillPayload, BakePayload, GcPayload, parsePayload } from '../queues/index.js';
import { enqueuedResult, type ApiRoute } from './api-route.js';
import { OpaqueResult, waited } from './response-schemas.js';

export const FLEET_ROUTES: readonly ApiRoute[] = [
  {
    method: 'post',
    scope: 'operator',
    path: '/v1/bake',
    operationId: 'bakeBase',
    response: waited(OpaqueResult),
    summary: 'Bake a base snapshot from a manifest (one job per manifest hash)',
    body: BakePayload,
    waitable: true,
    errorStatuses: [502, 504],
    result: '202 { queue, jobId, manifestHash }; with wait 200 adds result',
    async handle(deps, { body, wait }) {
      return enqueuedResult(wait, await deps.client.bake(parsePayload('bake request', BakePayload, body), wait));
    },
  },
  {
    method: 'post',
    scope: 'operator',
    path: '/v1/gc',
    operationId: 'collectGarbage',
    response: waited(OpaqueResult),
    summary: 'Run one bounded garbage collection of one kind (dryRun: true reports only)',
    body: GcPayload,
    waitable: true,
    errorStatuses: [502, 504],
    result: '202 { queue, jobId }; with wait 200 adds result',
    async handle(deps, { body, wait }) {
      return enqueuedResult(wait, await deps.client.gc(parsePayload('gc request', GcPayload, body), wait));
    },
  },
  {
    method: 'post',
    scope: 'operator',
    path: '/v1/backfill',
    operationId: 'backfill',
    response: waited(OpaqueResult),
    summary: 'Migrate one workspace from the legacy store, or run the sweep',
    body: BackfillPayload,
    waitable: true,
    errorStatuses: [502, 504],
    result: '202 { queue, jobId }; with wait 200 adds result',
    async handle(deps, { body, wait }) {
      return enqueuedResult(wait, await deps.client.backfill(parsePayload('backfill request', BackfillPayload, body), wait));
    },
  },
];
