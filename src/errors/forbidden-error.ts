import { FleetError } from './fleet-error.js';

/** A valid token used outside its scope (an operator route with an app token, another team's workspace): 403. */
export class ForbiddenError extends FleetError {
  readonly code = 'Forbidden';
  readonly retryable = false;
}
