/**
 * The generation fence of a durable sandbox name, at the SDK's HTTP boundary.
 *
 * With one name per workspace, a call made for an old generation could reach the sandbox of a
 * newer one: `Sandbox.get({ name })` finds whichever sandbox holds the name now, and the SDK's
 * auto-resume (on HTTP 410, reference "Auto-resume") fetches the sandbox by name again and
 * retries the call in whatever session it finds. A stale writer would then write into the new
 * incarnation (G2). So the `fetch` given to the SDK for one incarnation reads every answer that
 * hands out a session (`GET /v2/sandboxes/{name}`, with or without `resume`) and, when the
 * sandbox there carries another generation tag, answers 404 instead: to an old handle, a
 * replaced incarnation is gone, exactly as a deleted per-generation name was.
 */
import { GENERATION_TAG } from './sandbox-info.js';

/** Body of the 404 a fenced call receives (the SDK raises it as an `APIError`). */
export const SUPERSEDED_CODE = 'fleet_generation_superseded';

/** `baseFetch` for calls of generation `generation` of the sandbox `name`. */
export function fencedFetch(baseFetch: typeof globalThis.fetch, name: string, generation: number): typeof globalThis.fetch {
  const sandboxPath = `/v2/sandboxes/${encodeURIComponent(name)}`;
  return async (input, init) => {
    const response = await baseFetch(input, init);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (method !== 'GET' || !url.pathname.endsWith(sandboxPath) || !response.ok) return response;
    const body = (await response.clone().json().catch(() => null)) as { sandbox?: { tags?: Record<string, unknown> } } | null;
    const found = body?.sandbox?.tags?.[GENERATION_TAG];
    if (found === String(generation)) return response;
    await response.body?.cancel().catch(() => undefined);
    const message = `sandbox ${name} holds generation ${typeof found === 'string' ? found : 'unknown'}, not ${generation}: this incarnation was replaced`;
    return new Response(JSON.stringify({ error: { code: SUPERSEDED_CODE, message } }), { status: 404, headers: { 'content-type': 'application/json' } });
  };
}
