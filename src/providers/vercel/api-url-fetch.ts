/**
 * The SDK hard-codes its API base (`https://vercel.com/api`) and offers no option to change it; its
 * public `fetch` option is the supported way in. This wraps a fetch so every request under the
 * default base goes to `FLEET_VERCEL_API_URL` instead (a proxy, or the loopback stand-in in tests).
 * The override replaces the whole base, path included: `http://127.0.0.1:4000` turns
 * `https://vercel.com/api/v2/sandboxes?teamId=t` into `http://127.0.0.1:4000/v2/sandboxes?teamId=t`.
 */

/** The SDK's built-in API base (`dist/api-client/api-client.js`, `baseUrl` default). */
export const VERCEL_API_BASE = 'https://vercel.com/api';

/** `url` with the SDK's default base replaced by `apiUrl`; other URLs are returned unchanged. */
export function rewriteApiUrl(url: string, apiUrl: string): string {
  const base = apiUrl.replace(/\/+$/, '');
  const rest = url.slice(VERCEL_API_BASE.length);
  if (!url.startsWith(VERCEL_API_BASE) || !(rest === '' || rest.startsWith('/') || rest.startsWith('?'))) return url;
  return `${base}${rest}`;
}

/** A fetch that sends SDK requests to `apiUrl`; the SDK's `init` (signal, dispatcher) passes through. */
export function apiUrlFetch(apiUrl: string, baseFetch: typeof globalThis.fetch = globalThis.fetch): typeof globalThis.fetch {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return baseFetch(rewriteApiUrl(url, apiUrl), init);
  };
}
