import { FleetError } from './fleet-error.js';

/** One problem found by a schema, with the dotted path of the field and the offending value. */
export interface FieldIssue {
  readonly field: string;
  readonly message: string;
  readonly value?: unknown;
}

/** Thrown when a job payload, HTTP body or CLI argument fails its schema. Never retried. */
export class PayloadInvalidError extends FleetError {
  readonly code = 'PayloadInvalid';
  readonly retryable = false;
  readonly issues: readonly FieldIssue[];
  readonly subject: string;

  constructor(subject: string, issues: readonly FieldIssue[]) {
    super(`${subject}: ${issues.map(formatIssue).join('; ')}`, { context: { subject, issues } });
    this.subject = subject;
    this.issues = issues;
  }

  /** The first offending field, for one-line answers such as HTTP `error.field`. */
  get field(): string | undefined {
    return this.issues[0]?.field;
  }
}

// "field: message (got value)" with the value rendered compactly and truncated.
function formatIssue(issue: FieldIssue): string {
  const field = issue.field === '' ? '(payload)' : issue.field;
  return issue.value === undefined ? `${field}: ${issue.message}` : `${field}: ${issue.message} (got ${renderValue(issue.value)})`;
}

// JSON-ish rendering of an offending value, capped so a hostile payload cannot flood logs.
export function renderValue(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    // BigInt inside, cycles, or a null-prototype object that String() cannot convert either.
    try {
      text = String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
