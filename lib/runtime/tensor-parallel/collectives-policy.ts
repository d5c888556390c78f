/**
 * The `collectives` setting of tensor-parallel programs: where their all-reduces run
 * (./collectives.ts). Its own module so that settings checks need no GPU code.
 */
export type CollectivesPolicy = 'auto' | 'nccl' | 'host';

export const COLLECTIVES_POLICIES: readonly CollectivesPolicy[] = Object.freeze(['auto', 'nccl', 'host']);

/** Why `value` is not a policy (`what` names the option), or null when it is one (undefined is: `auto`). */
export function collectivesPolicyProblem(value: unknown, what: string): string | null {
  if (value === undefined || (typeof value === 'string' && (COLLECTIVES_POLICIES as readonly string[]).includes(value))) return null;
  return `${what} must be one of ${COLLECTIVES_POLICIES.map((p) => `'${p}'`).join(', ')}, got ${JSON.stringify(value)}`;
}
