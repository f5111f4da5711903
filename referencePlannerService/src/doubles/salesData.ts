/**
 * `demo/data/sales.csv`: invented monthly sales of five regions over four years (240 rows), the
 * data of the dialect doubles. Deterministic, so the committed file can be compared with this text.
 */

export const SALES_CSV_PATH = 'data/sales.csv';
export const SALES_COLUMNS = ['month', 'region', 'units', 'revenue'] as const;

const REGIONS: Array<[name: string, price: number, base: number]> = [
  ['Central', 21.5, 420],
  ['East', 19.9, 510],
  ['North', 23.0, 330],
  ['South', 18.4, 580],
  ['West', 22.2, 470]
];

/** A small linear congruential generator: the same seed always gives the same rows. */
function generator(seed: number): () => number {
  let value = seed >>> 0;
  return () => {
    value = (Math.imul(value, 1664525) + 1013904223) >>> 0;
    return value / 2 ** 32;
  };
}

export function salesCsv(): string {
  const random = generator(20240917);
  const rows = [SALES_COLUMNS.join(',')];
  for (let year = 2021; year <= 2024; year++) {
    for (let month = 1; month <= 12; month++) {
      const season = 1 + 0.25 * Math.sin(((month - 3) / 12) * 2 * Math.PI);
      const growth = 1 + 0.04 * (year - 2021);
      for (const [region, price, base] of REGIONS) {
        const units = Math.round(
          base * season * growth * (0.85 + 0.3 * random())
        );
        const revenue = (units * price * (0.95 + 0.1 * random())).toFixed(2);
        const label = `${year}-${String(month).padStart(2, '0')}`;
        rows.push(`${label},${region},${units},${revenue}`);
      }
    }
  }
  return rows.join('\n') + '\n';
}
