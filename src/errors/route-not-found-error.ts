import { FleetError } from './fleet-error.js';

/** Thrown at the HTTP edge for a path or method that has no route (404). */
export class RouteNotFoundError extends FleetError {
  readonly code = 'NotFound';
  readonly retryable = false;

  constructor(method: string, path: string) {
    super(`no route for ${method} ${path}`, { context: { method, path } });
  }
}
