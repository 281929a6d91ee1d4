/** '—' for a missing or non-finite value, else the number with up to `digits` decimals and thousands separators. */
export function formatNumber(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value.toLocaleString('en-US', { maximumFractionDigits: digits });
}

/** US dollars: cents for amounts of a dollar or more, four significant digits below that. */
export function formatDollars(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (value === 0) return '$0';
  if (value >= 1)
    return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  return `$${value.toPrecision(4).replace(/0+$/, '').replace(/\.$/, '')}`;
}

/**
 * How many times better Latch does than a peer: `peer / ours` for costs (lower is better),
 * `ours / peer` for rates (higher is better). Above 1 means Latch is better.
 */
export function advantage(
  ours: number | null | undefined,
  peer: number | null | undefined,
  better: 'lower' | 'higher',
): string {
  if (ours === null || ours === undefined || peer === null || peer === undefined) return '';
  if (!Number.isFinite(ours) || !Number.isFinite(peer)) return '';
  const [numerator, denominator] = better === 'lower' ? [peer, ours] : [ours, peer];
  if (denominator === 0) return numerator === 0 ? '1x' : '∞';
  return `${formatNumber(numerator / denominator, 2)}x`;
}
