/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table and the same zod
 * schemas that validate requests (zod 4 `z.toJSONSchema`, JSON Schema 2020-12 as OpenAPI 3.1
 * uses it). Served at `/openapi.json`.
 */
import { z } from 'zod';
import { WorkspaceId } from '../queues/index.js';
import { FLEET_VERSION } from '../version.js';
import type { ApiRoute } from './api-route.js';
import { WaitQuery } from './wait-query.js';
import { EnqueuedSchema } from './response-schemas.js';

type JsonObject = Record<string, unknown>;

// JSON Schema of a request schema as the client writes it (defaults make fields optional).
function schemaOf(schema: z.ZodType): JsonObject {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  return rest;
}

const ERROR_SCHEMA: JsonObject = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable error code (e.g. PayloadInvalid, StaleGeneration, WaitTimeout)' },
        message: { type: 'string' },
        retryable: { type: 'boolean', description: 'Whether the same request may succeed if sent again (the error\'s own retry intent)' },
        field: { type: 'string', description: 'First offending field (dotted path) of a PayloadInvalid error' },
        name: { type: 'string', description: "The error's class (e.g. StaleGenerationError), for clients that rebuild it" },
      },
    },
  },
};

const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Invalid JSON, body, path or query (PayloadInvalid, InvalidJson)',
  401: 'Missing or wrong bearer token (Unauthorized)',
  403: 'A valid token used outside its scope (Forbidden)',
  404: 'Not found: the workspace, or a live sandbox (WorkspaceNotFound); a file (FileNotFound); a kept revision (RevisionNotFound); a checkpoint or a job',
  409: 'Stale generation or state conflict (StaleGeneration, WorkspaceConflict, ShrinkGuard, NotReady, ...); not a regular file (NotAFile)',
  413: 'Body larger than FLEET_HTTP_BODY_LIMIT_BYTES (PayloadTooLarge)',
  415: 'Body not application/json (UnsupportedMediaType)',
  500: 'Unexpected error in the web process (Internal)',
  501: 'The operation needs a format 2 revision (NotImplemented: run `fleet archive migrate`)',
  502: "The job failed in a worker; error.code is the worker's code",
  503: 'Redis refused or could not be reached (RedisUnavailable; retry after the Retry-After seconds), or the provider is not configured (ProviderUnavailable)',
  507: 'A write would take the workspace past its hard quota (QuotaExceeded)',
  504: 'The wait cap passed before the job finished (WaitTimeout); the job continues',
};

// The JSON Schema of a success body as the server writes it.
function responseSchemaOf(schema: z.ZodType): JsonObject {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonObject;
  return rest;
}

const PATH_PARAM: JsonObject = {
  name: 'path',
  in: 'path',
  required: true,
  description: 'A path relative to the tree root, "/"-separated (send it percent-encoded, slashes as %2F, when it ends in /history or /restore)',
  schema: { type: 'string', minLength: 1 },
};

// The streamed answers a route gives on request (Accept), each item typed.
function streamedContent(route: ApiRoute): JsonObject {
  if (!route.streams) return {};
  const item = responseSchemaOf(route.streams.item);
  return Object.fromEntries(route.streams.types.map((type) => [type, { schema: { type: 'string' }, 'x-item-schema': item }]));
}

// The success content of a route, by what it produces.
function successContent(route: ApiRoute): JsonObject {
  const produces = route.produces ?? 'application/json';
  if (produces === 'application/json') return { 'application/json': { schema: route.response ? responseSchemaOf(route.response) : { type: 'object' } }, ...streamedContent(route) };
  if (produces === 'application/octet-stream') return { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } };
  return { [produces]: { schema: { type: 'string' }, ...(route.response ? { 'x-item-schema': responseSchemaOf(route.response) } : {}) } };
}

// The operation object of one route.
function operation(route: ApiRoute): JsonObject {
  const parameters: JsonObject[] = [];
  if (route.path.includes('{workspaceId}')) parameters.push({ name: 'workspaceId', in: 'path', required: true, schema: schemaOf(WorkspaceId) });
  if (route.path.includes('{path}')) parameters.push(PATH_PARAM);
  for (const match of route.path.matchAll(/\{(\w+)\}/g)) {
    const name = match[1]!;
    if (name !== 'workspaceId' && name !== 'path') parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.waitable) {
    const query = schemaOf(WaitQuery) as { properties: Record<string, JsonObject> };
    parameters.push({ name: 'wait', in: 'query', required: false, description: 'Wait for the job result (200) instead of answering 202', schema: query.properties.wait });
    parameters.push({ name: 'timeoutMs', in: 'query', required: false, description: 'Wait cap in ms; never above FLEET_HTTP_WAIT_CAP_MS', schema: query.properties.timeoutMs });
  }
  if (route.query) {
    const query = schemaOf(route.query) as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: (query.required ?? []).includes(name), ...(schema.description ? { description: schema.description } : {}), schema });
    }
  }
  const takesBody = (route.bodyKind ?? (route.method === 'post' || route.method === 'put' ? 'json' : 'none')) !== 'none';
  const statuses = [...new Set([400, 401, 403, ...(takesBody ? [413, 415] : []), 500, 503, ...route.errorStatuses])].sort();
  const responses: JsonObject = {};
  const success = { description: route.result, content: successContent(route) };
  if (!route.waitable) responses['200'] = success;
  else {
    responses['200'] = { ...success, description: `Finished (with ?wait=true): ${route.result}` };
    responses['202'] = { description: `Enqueued: ${route.result}`, content: { 'application/json': { schema: responseSchemaOf(EnqueuedSchema) } } };
  }
  for (const status of statuses) responses[String(status)] = { $ref: `#/components/responses/E${status}` };
  const requestBody =
    route.bodyKind === 'bytes'
      ? { requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } } }
      : route.body
        ? { requestBody: { required: false, content: { 'application/json': { schema: schemaOf(route.body) } } } }
        : {};
  return {
    operationId: route.operationId,
    summary: route.summary,
    'x-scope': route.scope,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...requestBody,
    responses,
  };
}

export function openApiDocument(routes: readonly ApiRoute[]): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) paths[route.path] = { ...(paths[route.path] ?? {}), [route.method]: operation(route) };
  const responses = Object.fromEntries(
    Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => [
      `E${status}`,
      { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: { title: 'sandbox-fleet HTTP API', version: FLEET_VERSION, description: 'Enqueue and inspect fleet work. Errors are { error: { code, message, field? } }.' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A token from FLEET_API_TOKENS (no token configured: open, loopback only)' } },
      schemas: { Error: ERROR_SCHEMA },
      responses,
    },
  };
}
