/**
 * Upgrade readiness by representative weight (reference-behavior.md 1.2 `/network/readiness`): each
 * representative's weight is attributed to the capabilities of the node that serves it, found by
 * following rep address -> directory registration -> peer id -> what that peer announced in
 * netcheck. A representative that cannot be followed to a connected peer counts as unknown.
 */
export interface Capabilities {
  version: string;
  features: readonly string[];
}

export interface ReadinessInput {
  /** Eligible weight per representative address. */
  weights: Map<string, bigint>;
  total: bigint;
  /** Features whose readiness is reported. */
  features: readonly string[];
  /** The capabilities behind a representative, or undefined when it cannot be resolved. */
  resolve(rep: string): Capabilities | undefined;
}

export interface Readiness {
  total_weight: string;
  feature_weight: Record<string, string>;
  feature_ready_milli: Record<string, number>;
  version_weight: { version: string; weight: string }[];
  unknown_weight: string;
  resolved_reps: number;
  total_reps: number;
}

export function repReadiness(input: ReadinessInput): Readiness {
  const byFeature = new Map(input.features.map((f) => [f, 0n]));
  const byVersion = new Map<string, bigint>();
  let resolvedWeight = 0n;
  let resolved = 0;
  for (const [rep, weight] of input.weights) {
    if (weight <= 0n) continue;
    const caps = input.resolve(rep);
    if (!caps) continue;
    resolved += 1;
    resolvedWeight += weight;
    byVersion.set(caps.version, (byVersion.get(caps.version) ?? 0n) + weight);
    for (const f of caps.features) {
      const w = byFeature.get(f);
      if (w !== undefined) byFeature.set(f, w + weight);
    }
  }
  const milli = (w: bigint) => (input.total === 0n ? 0 : Number((w * 1000n) / input.total));
  return {
    total_weight: input.total.toString(),
    feature_weight: Object.fromEntries([...byFeature].map(([f, w]) => [f, w.toString()])),
    feature_ready_milli: Object.fromEntries([...byFeature].map(([f, w]) => [f, milli(w)])),
    version_weight: [...byVersion]
      .sort(([va, wa], [vb, wb]) => (wa !== wb ? (wb > wa ? 1 : -1) : va < vb ? -1 : va > vb ? 1 : 0))
      .map(([version, weight]) => ({ version, weight: weight.toString() })),
    unknown_weight: (input.total - resolvedWeight).toString(),
    resolved_reps: resolved,
    total_reps: input.weights.size,
  };
}
