import { FleetError } from './fleet-error.js';
import { renderValue } from './payload-invalid-error.js';

/** Thrown at start-up when an environment variable has a bad value. */
export class ConfigError extends FleetError {
  readonly code = 'ConfigInvalid';
  readonly retryable = false;
  readonly variable: string;

  constructor(variable: string, expectation: string, value: unknown) {
    super(`${variable}: expected ${expectation}, got ${value === undefined ? '(unset)' : renderValue(value)}`, {
      context: { variable, value },
    });
    this.variable = variable;
  }
}
