/**
 * `FLEET_*` variables set in the environment that the fleet does not read: most often a typo
 * (`FLEET_CHECKPOINT_INTERVAL` for `FLEET_CHECKPOINT_INTERVAL_MS`), which would otherwise be
 * ignored in silence and leave the default in force. Pure: the CLI prints what it returns.
 */

/** One unknown variable, and the known name it most likely meant (null when none is close). */
export interface UnknownVariable {
  readonly name: string;
  readonly suggestion: string | null;
}

/** The farthest a name may be from a known one (edits per character of the longer) to be suggested. */
const MAX_EDIT_RATIO = 0.34;

/** Unknown `FLEET_*` names of `env`, sorted, with the nearest of `known` where one is close. */
export function unknownVariables(env: Readonly<Record<string, string | undefined>>, known: readonly string[]): UnknownVariable[] {
  const knownSet = new Set(known);
  return Object.keys(env)
    .filter((name) => name.startsWith('FLEET_') && env[name] !== undefined && !knownSet.has(name))
    .sort()
    .map((name) => ({ name, suggestion: nearest(name, known) }));
}

/** The warning line for one unknown variable. */
export function unknownVariableWarning({ name, suggestion }: UnknownVariable): string {
  return `warning: ${name} is not a variable the fleet reads and is ignored${suggestion ? ` (did you mean ${suggestion}?)` : ''}; \`fleet env\` lists them`;
}

// The known name with the fewest edits from `name`, when few enough for a typo.
function nearest(name: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(MAX_EDIT_RATIO * Math.max(name.length, best.length))) ? best : null;
}

// Levenshtein distance (insertions, deletions, substitutions), one row at a time.
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
