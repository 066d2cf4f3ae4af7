/**
 * Reads a request body as a JSON object: an empty body is `{}` (routes whose fields are all
 * optional need none); anything else must be declared `application/json` (415) and parse (400),
 * and must be an object (400, PayloadInvalid). The size limit is enforced before this runs.
 */
import type { Context } from 'hono';
import { InvalidJsonError } from '../errors/invalid-json-error.js';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { UnsupportedMediaTypeError } from '../errors/unsupported-media-type-error.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export async function readJsonBody(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  const contentType = c.req.header('content-type');
  if (!contentType || !JSON_TYPE.test(contentType)) throw new UnsupportedMediaTypeError(contentType);
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch (error) {
    throw new InvalidJsonError(`request body is not valid JSON (${(error as Error).message})`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new PayloadInvalidError('request body', [{ field: '', message: 'must be a JSON object', value: body }]);
  }
  return body as Record<string, unknown>;
}
