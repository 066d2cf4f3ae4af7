import { FleetError } from './fleet-error.js';

/** Thrown at the HTTP edge when a request body is not declared `application/json` (415). */
export class UnsupportedMediaTypeError extends FleetError {
  readonly code = 'UnsupportedMediaType';
  readonly retryable = false;

  constructor(contentType: string | undefined) {
    super(`request body must be application/json, got ${contentType ? JSON.stringify(contentType) : 'no content-type'}`, { context: { contentType } });
  }
}
