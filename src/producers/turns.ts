/**
 * Turns, opened and closed explicitly by the app (issue 19.3): while a turn is open the workspace
 * is not idle, however long the turn takes; a turn that is neither closed nor opened again
 * expires after its TTL (FLEET_TURN_TTL_MS, or `ttlMs`), so a crashed app cannot keep a
 * workspace awake forever. Applied to Redis directly (no job): the answer is immediate.
 */
import { z } from 'zod';
import { WorkspaceNotFoundError } from '../errors/workspace-not-found-error.js';
import { ShortText, WorkspaceId, parsePayload } from '../queues/payload.js';
import type { ActivityStore } from '../state/activity-store.js';
import type { AddressStore } from '../state/address-store.js';

export const TurnRequest = z
  .object({
    workspaceId: WorkspaceId,
    turnId: ShortText,
    /** How long the turn stays open unless closed or opened again (default FLEET_TURN_TTL_MS). */
    ttlMs: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1_000, { error: 'must be >= 1000' }).max(86_400_000, { error: 'must be <= 86400000' }).optional(),
  })
  .strict();
export type TurnRequest = z.infer<typeof TurnRequest>;
export type TurnInput = z.input<typeof TurnRequest>;

export interface TurnResult {
  readonly workspaceId: string;
  readonly turnId: string;
  /** Whether the turn is open after the call. */
  readonly open: boolean;
  /** Epoch ms the open turn expires unless closed or opened again (null once closed). */
  readonly expiresAt: number | null;
  /** For a close: whether the turn was open (false: closed before, expired or never opened). */
  readonly wasOpen?: boolean;
}

export interface TurnDeps {
  readonly addresses: Pick<AddressStore, 'get' | 'touch'>;
  readonly activity: Pick<ActivityStore, 'openTurn' | 'closeTurn'>;
  readonly turnTtlMs: number;
}

// The request, validated, for a workspace with a live address (404 otherwise).
async function checked(deps: TurnDeps, input: TurnInput): Promise<TurnRequest> {
  const request = parsePayload('turn request', TurnRequest, input);
  if (!(await deps.addresses.get(request.workspaceId))) throw new WorkspaceNotFoundError(request.workspaceId);
  return request;
}

/** Opens (or re-opens, extending) a turn of a live workspace. */
export async function openTurn(deps: TurnDeps, input: TurnInput): Promise<TurnResult> {
  const request = await checked(deps, input);
  const now = Date.now();
  const ttlMs = request.ttlMs ?? deps.turnTtlMs;
  await deps.activity.openTurn(request.workspaceId, request.turnId, ttlMs, now);
  await deps.addresses.touch(request.workspaceId, now);
  return { workspaceId: request.workspaceId, turnId: request.turnId, open: true, expiresAt: now + ttlMs };
}

/** Closes a turn: the idle TTL counts from now. */
export async function closeTurn(deps: TurnDeps, input: Omit<TurnInput, 'ttlMs'>): Promise<TurnResult> {
  const request = await checked(deps, input);
  const wasOpen = await deps.activity.closeTurn(request.workspaceId, request.turnId);
  await deps.addresses.touch(request.workspaceId);
  return { workspaceId: request.workspaceId, turnId: request.turnId, open: false, expiresAt: null, wasOpen };
}
