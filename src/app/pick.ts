/** The named members of `from`, and nothing else (a narrow deps object out of the services). */
export function pick<T extends object, K extends keyof T>(from: T, ...keys: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const key of keys) picked[key] = from[key];
  return picked;
}
