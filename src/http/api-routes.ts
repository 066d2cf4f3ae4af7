/**
 * Every route of the HTTP API (the table behind the mount and the OpenAPI document). Order
 * matters where templates overlap: the mount registers the routes in this order and the first
 * match answers, so REVISION_FILE_ROUTES (`files/{path}/history`, `files/{path}/restore`) come
 * before FILE_ROUTES, whose `{path}` takes the rest of the URL.
 */
import type { ApiRoute } from './api-route.js';
import { EVENT_ROUTES } from './event-routes.js';
import { FILE_ROUTES } from './file-routes.js';
import { FLEET_ROUTES } from './fleet-routes.js';
import { JOB_ROUTES } from './job-routes.js';
import { REVISION_FILE_ROUTES } from './revision-file-routes.js';
import { WORKSPACE_LIST_ROUTES } from './workspace-list-routes.js';
import { WORKSPACE_ROUTES } from './workspace-routes.js';

export const API_ROUTES: readonly ApiRoute[] = [...WORKSPACE_ROUTES, ...WORKSPACE_LIST_ROUTES, ...REVISION_FILE_ROUTES, ...FILE_ROUTES, ...JOB_ROUTES, ...EVENT_ROUTES, ...FLEET_ROUTES];
