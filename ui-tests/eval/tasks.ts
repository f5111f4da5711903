/**
 * `make eval`: closed-form questions about a CSV file made here, each with its answer computed below
 * (independently of any model). The planner is asked to leave its answer in the kernel variable `answer`.
 */

export interface IRow {
  region: string;
  quarter: number;
  product: string;
  units: number;
  price: number;
  revenue: number;
}

export interface IEvalTask {
  id: string;
  question: string;
  expected: string | number;
  /** Numbers: the largest accepted distance from `expected`. */
  tolerance?: number;
}

const REGIONS = ['North', 'South', 'East', 'West'];
const PRODUCTS = ['A', 'B', 'C'];

/** A small seeded generator (mulberry32), so the file is the same on every machine. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function salesRows(): IRow[] {
  const next = random(7);
  const rows: IRow[] = [];
  for (const region of REGIONS) {
    for (let quarter = 1; quarter <= 4; quarter++) {
      for (const product of PRODUCTS) {
        const units = 10 + Math.floor(next() * 90);
        const price = Math.round((5 + next() * 45) * 100) / 100;
        rows.push({
          region,
          quarter,
          product,
          units,
          price,
          revenue: Math.round(units * price * 100) / 100
        });
      }
    }
  }
  return rows;
}

export function salesCsv(rows: IRow[]): string {
  const lines = ['region,quarter,product,units,price,revenue'];
  for (const r of rows) {
    lines.push(
      `${r.region},${r.quarter},${r.product},${r.units},${r.price},${r.revenue}`
    );
  }
  return lines.join('\n') + '\n';
}

function sumBy(rows: IRow[], key: keyof IRow, value: keyof IRow) {
  const sums = new Map<string, number>();
  for (const row of rows) {
    const k = String(row[key]);
    sums.set(k, (sums.get(k) ?? 0) + Number(row[value]));
  }
  return sums;
}

function argmax(map: Map<string, number>): string {
  return [...map.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
}

function argmin(map: Map<string, number>): string {
  return [...map.entries()].reduce((a, b) => (b[1] < a[1] ? b : a))[0];
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function evalTasks(rows: IRow[]): IEvalTask[] {
  const total = rows.reduce((s, r) => s + r.revenue, 0);
  const revenueByRegion = sumBy(rows, 'region', 'revenue');
  const q3 = sumBy(
    rows.filter(r => r.quarter === 3),
    'region',
    'revenue'
  );
  const productA = rows.filter(r => r.product === 'A');
  const ask = (q: string) =>
    `${q} Use sales.csv. Store the result in a variable named answer.`;
  return [
    {
      id: 'top_region',
      question: ask('Which region has the highest total revenue?'),
      expected: argmax(revenueByRegion)
    },
    {
      id: 'bottom_region',
      question: ask('Which region has the lowest total revenue?'),
      expected: argmin(revenueByRegion)
    },
    {
      id: 'top_units_product',
      question: ask('Which product sold the most units in total?'),
      expected: argmax(sumBy(rows, 'product', 'units'))
    },
    {
      id: 'top_quarter',
      question: ask(
        'Which quarter (a number from 1 to 4) had the highest total revenue?'
      ),
      expected: Number(argmax(sumBy(rows, 'quarter', 'revenue')))
    },
    {
      id: 'row_count',
      question: ask('How many rows does the data have?'),
      expected: rows.length
    },
    {
      id: 'total_revenue',
      question: ask(
        'What is the total revenue, rounded to the nearest integer?'
      ),
      expected: Math.round(total),
      tolerance: 1
    },
    {
      id: 'mean_price',
      question: ask('What is the mean price, rounded to 2 decimals?'),
      expected: round(rows.reduce((s, r) => s + r.price, 0) / rows.length, 2),
      tolerance: 0.011
    },
    {
      id: 'top_region_q3',
      question: ask('Which region has the highest revenue in quarter 3?'),
      expected: argmax(q3)
    },
    {
      id: 'top_mean_price_product',
      question: ask('Which product has the highest average price?'),
      expected: argmax(
        new Map(
          [...sumBy(rows, 'product', 'price')].map(([k, v]) => [
            k,
            v / rows.filter(r => r.product === k).length
          ])
        )
      )
    },
    {
      id: 'distinct_products',
      question: ask('How many distinct products are there?'),
      expected: PRODUCTS.length
    },
    {
      id: 'north_units',
      question: ask(
        'What is the total number of units sold in the North region?'
      ),
      expected: rows
        .filter(r => r.region === 'North')
        .reduce((s, r) => s + r.units, 0)
    },
    {
      id: 'max_units',
      question: ask('What is the largest units value in a single row?'),
      expected: Math.max(...rows.map(r => r.units))
    },
    {
      id: 'product_a_top_quarter',
      question: ask(
        'In which quarter (a number from 1 to 4) did product A sell the most units?'
      ),
      expected: Number(argmax(sumBy(productA, 'quarter', 'units')))
    },
    {
      id: 'median_revenue',
      question: ask('What is the median revenue, rounded to 2 decimals?'),
      expected: round(median(rows.map(r => r.revenue)), 2),
      tolerance: 0.011
    },
    {
      id: 'rows_over_1000',
      question: ask('How many rows have a revenue above 1000?'),
      expected: rows.filter(r => r.revenue > 1000).length
    },
    {
      id: 'distinct_regions',
      question: ask('How many distinct regions are there?'),
      expected: REGIONS.length
    },
    {
      id: 'product_b_revenue',
      question: ask(
        'What is the total revenue of product B, rounded to the nearest integer?'
      ),
      expected: Math.round(
        rows.filter(r => r.product === 'B').reduce((s, r) => s + r.revenue, 0)
      ),
      tolerance: 1
    },
    {
      id: 'bottom_product',
      question: ask('Which product has the lowest total revenue?'),
      expected: argmin(sumBy(rows, 'product', 'revenue'))
    },
    {
      id: 'east_share',
      question: ask(
        'What percentage of the total revenue comes from the East region, rounded to 1 decimal?'
      ),
      expected: round((100 * (revenueByRegion.get('East') ?? 0)) / total, 1),
      tolerance: 0.051
    },
    {
      id: 'max_price',
      question: ask('What is the highest price in the data?'),
      expected: Math.max(...rows.map(r => r.price)),
      tolerance: 0.001
    }
  ];
}

/** Is the kernel's `answer` (its JSON text) the expected one? Strings ignore case and spaces. */
export function isCorrect(task: IEvalTask, answerJson: string | null): boolean {
  if (answerJson === null) {
    return false;
  }
  let value: unknown;
  try {
    value = JSON.parse(answerJson);
  } catch {
    return false;
  }
  if (typeof task.expected === 'number') {
    const number = typeof value === 'string' ? Number(value.trim()) : value;
    return (
      typeof number === 'number' &&
      Number.isFinite(number) &&
      Math.abs(number - task.expected) <= (task.tolerance ?? 1e-9)
    );
  }
  return (
    typeof value === 'string' &&
    value.trim().toLowerCase() === task.expected.toLowerCase()
  );
}
