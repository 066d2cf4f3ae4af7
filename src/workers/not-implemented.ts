/** Processor of a queue whose owning feature has not landed: fails permanently, never pretends. */
import { NotImplementedError } from '../errors/not-implemented-error.js';
import type { Processor } from '../jobs/processor-context.js';

export function notImplemented(queue: string): Processor {
  return async () => {
    throw new NotImplementedError(`the ${queue} processor`);
  };
}
