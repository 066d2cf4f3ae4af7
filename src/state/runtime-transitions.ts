/**
 * The runtime resource's state machine as data, and one fenced Lua script per transition built
 * from it (runtime-store.ts runs them). Every transition checks, in the same atomic step, the
 * state it comes from and how its generation relates to the record's and to the workspace's
 * generation counter, so a provisioner that was superseded can never write over a newer
 * incarnation's record (issue 19.4).
 *
 *   (none) ─begin→ provisioning ─ready→ ready ─stop→ stopped
 *                       │                 ▲           │
 *                       └─fail→ error     └──confirm──┘
 *   any state of an older generation ─begin→ provisioning (a new incarnation starts)
 *
 * `confirm` records the published incarnation (reused or resumed) as ready. It is allowed over a
 * record of the same or an older generation, and over a newer generation's record only when that
 * attempt is over without an incarnation: `error`, or `provisioning` not updated for the
 * provision deadline (its provisioner died). A newer provisioning still at work is never
 * overwritten.
 */
import { luaScript, type LuaScript } from '../lib/lua-script.js';

export type RuntimeState = 'pending' | 'provisioning' | 'ready' | 'stopped' | 'error';

/**
 * How the transition's generation relates to the record:
 * - `newer`: a new incarnation; the record (if any) is of an older generation.
 * - `same`: the record is of exactly this generation.
 * - `published`: the record (if any) is of this or an older generation, or of a newer attempt
 *   that is over without an incarnation (`error`, or `provisioning` gone stale).
 */
export type GenerationRule = 'newer' | 'same' | 'published';

export interface RuntimeTransition {
  readonly name: string;
  readonly to: RuntimeState;
  /** States the record may be in; `none` = no record yet. */
  readonly from: readonly (RuntimeState | 'none')[];
  readonly generation: GenerationRule;
  /** The workspace's generation counter must equal the transition's generation. */
  readonly current: boolean;
  readonly description: string;
}

const ANY: readonly (RuntimeState | 'none')[] = ['none', 'pending', 'provisioning', 'ready', 'stopped', 'error'];

/** The documented transitions (README "Runtime state machine"). */
export const RUNTIME_TRANSITIONS = Object.freeze({
  begin: { name: 'begin', to: 'provisioning', from: ANY, generation: 'newer', current: true, description: 'a provisioner starts a new incarnation (after bumping the generation)' },
  handle: { name: 'handle', to: 'provisioning', from: ['provisioning'], generation: 'same', current: true, description: 'the new incarnation exists: record its handle and host' },
  ready: { name: 'ready', to: 'ready', from: ['provisioning'], generation: 'same', current: true, description: 'the new incarnation is restored, marked ready and published' },
  fail: { name: 'fail', to: 'error', from: ['provisioning'], generation: 'same', current: false, description: 'provisioning this generation failed before it was ready' },
  confirm: {
    name: 'confirm',
    to: 'ready',
    from: ['none', 'provisioning', 'ready', 'stopped', 'error'],
    generation: 'published',
    // A failed newer attempt leaves the counter above the published generation: not a reason to refuse.
    current: false,
    description: 'the published incarnation was confirmed by its provider (reused or resumed)',
  },
  stop: { name: 'stop', to: 'stopped', from: ['ready'], generation: 'same', current: false, description: 'an idle incarnation is stopped (files kept)' },
  upgrade: { name: 'upgrade', to: 'ready', from: ['ready'], generation: 'same', current: true, description: "the incarnation's tree was migrated to a new template version (templateVersion), verified and persisted" },
} satisfies Record<string, RuntimeTransition>);

export type RuntimeTransitionName = keyof typeof RUNTIME_TRANSITIONS;

/** The record as a transition sees it. */
export interface RecordFacts {
  readonly state: RuntimeState | 'none';
  readonly generation: number;
  readonly updatedAt: number;
}

/**
 * Whether a transition may be applied (pure: the same rule the script enforces). `staleBefore`:
 * a provisioning record last updated before it belongs to a dead provisioner.
 */
export function transitionAllowed(t: RuntimeTransition, record: RecordFacts, generation: number, counter: number, staleBefore: number): boolean {
  if (!t.from.includes(record.state)) return false;
  if (t.current && counter !== generation) return false;
  if (record.state === 'none') return t.generation !== 'same';
  if (t.generation === 'newer') return record.generation < generation;
  if (t.generation === 'same') return record.generation === generation;
  return record.generation <= generation || record.state === 'error' || (record.state === 'provisioning' && record.updatedAt < staleBefore);
}

// The Lua condition of a generation rule (recGen and updated = the record's, gen = the transition's).
const RULE_LUA: Record<GenerationRule, string> = {
  newer: "state == 'none' or recGen < gen",
  same: "state ~= 'none' and recGen == gen",
  published: "state == 'none' or recGen <= gen or state == 'error' or (state == 'provisioning' and updated < tonumber(ARGV[3]))",
};

// One script per transition: its allowed states and rules are constants of the script.
function transitionScript(t: RuntimeTransition): LuaScript {
  const allowed = t.from.map((s) => `['${s}'] = true`).join(', ');
  return luaScript(
    `runtime-${t.name}`,
    `-- Runtime transition "${t.name}" → ${t.to}: ${t.description}.
-- Allowed previous states: ${t.from.join(', ')} ('none' = no record); generation rule: ${t.generation}${t.current ? '; the workspace generation counter must equal the generation' : ''}.
-- KEYS[1] runtime hash   KEYS[2] generation counter of the workspace
-- ARGV[1] generation   ARGV[2] now (ms)   ARGV[3] stale-before (ms: an older provisioning record is dead)
-- ARGV[4..] field/value pairs to set with the state
-- Returns {1} applied | {0, state|'none', recordGeneration, counter} refused (nothing written)
local state = redis.call('HGET', KEYS[1], 'state') or 'none'
local recGen = tonumber(redis.call('HGET', KEYS[1], 'generation') or '0')
local updated = tonumber(redis.call('HGET', KEYS[1], 'updatedAt') or '0')
local counter = tonumber(redis.call('GET', KEYS[2]) or '0')
local gen = tonumber(ARGV[1])
local allowed = { ${allowed} }
if not allowed[state] then return {0, state, recGen, counter} end
${t.current ? 'if counter ~= gen then return {0, state, recGen, counter} end' : ''}
if not (${RULE_LUA[t.generation]}) then return {0, state, recGen, counter} end
redis.call('HSETNX', KEYS[1], 'createdAt', ARGV[2])
redis.call('HSET', KEYS[1], 'state', '${t.to}', 'generation', ARGV[1], 'updatedAt', ARGV[2])
if #ARGV > 3 then redis.call('HSET', KEYS[1], unpack(ARGV, 4)) end
return {1}`,
  );
}

/** The script of each transition. */
export const TRANSITION_SCRIPTS: Readonly<Record<RuntimeTransitionName, LuaScript>> = Object.freeze(
  Object.fromEntries(Object.entries(RUNTIME_TRANSITIONS).map(([name, t]) => [name, transitionScript(t)])) as Record<RuntimeTransitionName, LuaScript>,
);
