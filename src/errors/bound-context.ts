/**
 * A JSON-safe, size-bounded copy of an error's `context` for the wire. Context values come from
 * anywhere (sandbox output, payload values, paths), and a failure lives in the job hash and the
 * persist intent for as long as the job is kept, so depth, breadth, string length and the total
 * are capped here, when the failure is encoded.
 */

/** Longest string value kept (longer ones keep their head and say how much was cut). */
export const MAX_CONTEXT_STRING = 1_024;
/** Most array items and object keys kept on one level. */
export const MAX_CONTEXT_ITEMS = 50;
/** Deepest nesting kept; deeper values become a placeholder (this also ends cycles). */
export const MAX_CONTEXT_DEPTH = 4;
/** Most values visited in all: 50 items on 4 levels would be millions otherwise. */
const MAX_CONTEXT_NODES = 1_000;
/** Largest JSON of the whole context; top-level keys past it are dropped and named. */
export const MAX_CONTEXT_JSON = 8_192;

// The head of `text` if it is longer than `max`, saying how much was cut.
export function capText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}... (${text.length - max} more chars)` : text;
}

// The bounded JSON form of one value; `undefined` for values JSON leaves out.
function jsonSafe(value: unknown, depth: number, budget: { nodes: number }): unknown {
  budget.nodes -= 1;
  if (budget.nodes < 0) return '[cut]';
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'string') return capText(value, MAX_CONTEXT_STRING);
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return String(value);
  if (typeof value !== 'object') return undefined;
  if (value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value instanceof Error) return { name: capText(value.name, 100), message: capText(value.message, MAX_CONTEXT_STRING) };
  if (depth >= MAX_CONTEXT_DEPTH) return Array.isArray(value) ? '[array]' : '[object]';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_CONTEXT_ITEMS).map((item) => jsonSafe(item, depth + 1, budget) ?? null);
    return value.length > MAX_CONTEXT_ITEMS ? [...items, `... (${value.length - MAX_CONTEXT_ITEMS} more)`] : items;
  }
  const keys = Object.keys(value);
  const out: Record<string, unknown> = {};
  for (const key of keys.slice(0, MAX_CONTEXT_ITEMS)) {
    const safe = jsonSafe((value as Record<string, unknown>)[key], depth + 1, budget);
    // defineProperty: a `__proto__` key stays a plain key.
    if (safe !== undefined) Object.defineProperty(out, capText(key, 100), { value: safe, enumerable: true, writable: true, configurable: true });
  }
  if (keys.length > MAX_CONTEXT_ITEMS) out['...'] = `${keys.length - MAX_CONTEXT_ITEMS} more keys`;
  return out;
}

/** `context` as bounded JSON data; never throws (a getter that throws reads as `[unreadable]`). */
export function boundContext(context: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const budget = { nodes: MAX_CONTEXT_NODES };
  const out: Record<string, unknown> = {};
  const dropped: string[] = [];
  let size = 2;
  for (const key of Object.keys(context).slice(0, MAX_CONTEXT_ITEMS)) {
    let safe: unknown;
    try {
      safe = jsonSafe(context[key], 1, budget);
    } catch {
      safe = '[unreadable]';
    }
    if (safe === undefined) continue;
    const name = capText(key, 100);
    const entry = JSON.stringify(name).length + JSON.stringify(safe).length + 2;
    if (size + entry > MAX_CONTEXT_JSON) {
      dropped.push(name);
      continue;
    }
    size += entry;
    Object.defineProperty(out, name, { value: safe, enumerable: true, writable: true, configurable: true });
  }
  if (dropped.length > 0) out.contextDropped = dropped;
  return out;
}
