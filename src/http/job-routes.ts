/** `GET /v1/jobs/{queue}/{jobId}`: a job's state, progress, result or typed failure (what `?wait=true` would have answered, later). */
import { z } from 'zod';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { isFleetQueueName } from '../status/queue-names.js';
import { jobView } from '../status/job-view.js';
import type { ApiRoute } from './api-route.js';
import { Timestamp } from './response-schemas.js';

const JOB_ID = /^[A-Za-z0-9:._@-]{1,256}$/;

export const JobViewSchema = z.object({
  queue: z.string(),
  jobId: z.string(),
  name: z.string(),
  state: z.string().describe('waiting, active, delayed, prioritized, completed, failed, waiting-children, unknown'),
  progress: z.unknown(),
  attemptsMade: z.number().int(),
  result: z.unknown(),
  failure: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }).nullable(),
  createdAt: Timestamp,
  processedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
});

export const JOB_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    scope: 'app',
    path: '/v1/jobs/{queue}/{jobId}',
    operationId: 'showJob',
    summary: "A job of one of the fleet's queues (the queue and jobId an enqueue answered): state, progress, result, or its failure as { code, message, retryable }",
    waitable: false,
    errorStatuses: [404],
    response: JobViewSchema,
    result: '200 { queue, jobId, name, state, progress, attemptsMade, result, failure, createdAt, processedAt, finishedAt }',
    async handle(deps, { params }) {
      const queue = params.queue ?? '';
      const jobId = params.jobId ?? '';
      if (!isFleetQueueName(queue)) throw new PayloadInvalidError('path', [{ field: 'queue', message: 'must be a fleet queue (provision, persist@<host>, checkpoint@<host>, gc, bake, backfill, hostops@<host>)', value: queue }]);
      if (!JOB_ID.test(jobId)) throw new PayloadInvalidError('path', [{ field: 'jobId', message: 'must be 1-256 letters, digits or :._@-', value: jobId }]);
      return { status: 200, body: await jobView(deps.client.pool.queue(queue), jobId) };
    },
  },
];
