/**
 * A fetch for the Vercel SDK's public `fetch` option that counts the body bytes crossing it
 * both ways, by what they are: the tree listing and the archive read back (`fs/read` of
 * `.fleet/list-*`, and `.fleet/delta-*` or the whole-tree `.fleet/export-*`), uploads
 * (`fs/write`), command streams (`/cmd`), the rest of the API. This is the SDK boundary: what a
 * real deployment would move over the network.
 */
export type TrafficKind = 'listing' | 'archive' | 'read-other' | 'upload' | 'command' | 'api';

export interface TrafficCounter {
  /** Bytes per kind since the last `reset`. */
  totals(): Readonly<Record<TrafficKind, number>>;
  reset(): void;
}

const KINDS: readonly TrafficKind[] = ['listing', 'archive', 'read-other', 'upload', 'command', 'api'];

// What a request is, from its path and (for file reads) the file it names.
function kindOf(url: string, body: unknown): TrafficKind {
  const { pathname } = new URL(url);
  if (pathname.endsWith('/fs/read')) {
    const file = typeof body === 'string' ? String((JSON.parse(body) as { path?: unknown }).path ?? '') : '';
    if (file.includes('/.fleet/list-')) return 'listing';
    if (file.includes('/.fleet/delta-') || file.includes('/.fleet/export-')) return 'archive';
    return 'read-other';
  }
  if (pathname.endsWith('/fs/write')) return 'upload';
  if (/\/cmd(\/|$)/.test(pathname)) return 'command';
  return 'api';
}

// Byte length of a request body as the SDK passes it (JSON strings and buffers).
function bodyBytes(body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  if (body instanceof ArrayBuffer) return body.byteLength;
  return 0;
}

export function countingFetch(base: typeof globalThis.fetch): { fetch: typeof globalThis.fetch; counter: TrafficCounter } {
  let totals = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<TrafficKind, number>;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const kind = kindOf(url, init?.body);
    totals[kind] += bodyBytes(init?.body);
    const response = await base(input, init);
    if (response.body === null) return response;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          totals[kind] += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    );
    const copy = new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
    // The SDK reads the session and sandbox from the response URL when it reports an error.
    Object.defineProperty(copy, 'url', { value: response.url });
    return copy;
  };
  return {
    fetch,
    counter: {
      totals: () => ({ ...totals }),
      reset: () => {
        totals = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<TrafficKind, number>;
      },
    },
  };
}
