/** Small statistics for the benchmark figures. */

/** The q-quantile (0..1) by linear interpolation between closest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) {
    return NaN;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Rounded for the report: 3 significant digits for small numbers, integers above 1000. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) {
    return value;
  }
  if (Math.abs(value) >= 1000) {
    return Math.round(value);
  }
  return Number(value.toPrecision(digits));
}
