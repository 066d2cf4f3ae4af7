/**
 * The real processors of this process, built from their dependencies. A queue missing here is
 * served by `notImplemented` (a permanent failure, never a pretend success).
 */
import type { QueueName } from '../../queues/index.js';
import type { Processor } from '../processor-context.js';
import type { ProcessorDeps } from './processor-deps.js';

export function buildProcessors(_deps: ProcessorDeps): Partial<Record<QueueName, Processor>> {
  return {};
}
