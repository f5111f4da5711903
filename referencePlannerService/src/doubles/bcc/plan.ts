/**
 * The plan the bcc double proposes for the sales data: two stages of two steps. Each step takes
 * two behaviors; the second prints a marker that the reflection looks for in `state.effects.current`.
 */
import { pyString } from '../../../../src/referencePlanner/pandasCode';

export interface IArtifact {
  name: string;
  description: string;
}

export interface IBccStep {
  id: string;
  title: string;
  goal: string;
  artifact: IArtifact;
  /** Python that creates the artifact (behavior 1). */
  build: string;
  /** Python that checks it (behavior 2, before the marker). */
  check: string;
}

export interface IBccStage {
  id: string;
  title: string;
  goal: string;
  optional: boolean;
  steps: IBccStep[];
}

export const BCC_WORKFLOW_TITLE = 'Sales revenue review';

/** The text a finished step prints; the generated code assembles it so the code text never contains it. */
export function doneMarker(stepId: string): string {
  return `BCC-DONE:${stepId}`;
}

export const BCC_STAGES: readonly IBccStage[] = [
  {
    id: 'sales_data_check',
    title: 'Sales Data Check',
    goal: 'Load sales.csv and check months, regions & revenue. Artifacts: sales_df, quality_report; Acceptance: len(sales_df) > 0 and missing cells < 1%.',
    optional: false,
    steps: [
      {
        id: 'load_sales',
        title: 'Load Sales Data',
        goal: 'Read the CSV into sales_df and print its shape.',
        artifact: { name: 'sales_df', description: 'DataFrame with 4 columns' },
        build: 'print(sales_df.shape)',
        check: 'print(sales_df.dtypes.astype(str).to_dict())'
      },
      {
        id: 'check_quality',
        title: 'Check Data Quality',
        goal: 'Count missing cells and duplicated rows; missing < 1% & no duplicates.',
        artifact: {
          name: 'quality_report',
          description: 'missing and duplicate counts'
        },
        build:
          'quality_report = {"missing": int(sales_df.isna().sum().sum()), "duplicates": int(sales_df.duplicated().sum())}\nprint(quality_report)',
        check:
          'print("rows", len(sales_df), "regions", sales_df["region"].nunique())'
      }
    ]
  },
  {
    id: 'revenue_summary',
    title: 'Revenue Summary',
    goal: 'Summarise revenue per region and per month; highlight months with revenue < 5000.',
    optional: true,
    steps: [
      {
        id: 'revenue_by_region',
        title: 'Revenue by Region',
        goal: 'Total revenue per region.',
        artifact: {
          name: 'region_revenue',
          description: 'Series of revenue per region'
        },
        build:
          'region_revenue = sales_df.groupby("region")["revenue"].sum().round(2)\nprint(region_revenue.to_dict())',
        check: 'print("top region", region_revenue.idxmax())'
      },
      {
        id: 'monthly_trend',
        title: 'Monthly Trend',
        goal: 'Revenue per month and the best month.',
        artifact: {
          name: 'monthly_revenue',
          description: 'Series of revenue per month'
        },
        build:
          'monthly_revenue = sales_df.groupby("month")["revenue"].sum()\nprint(len(monthly_revenue), "months")',
        check: 'print("best month", monthly_revenue.idxmax())'
      }
    ]
  }
];

export function findStage(id: unknown): IBccStage | undefined {
  return BCC_STAGES.find(stage => stage.id === id);
}

export function findStep(
  stage: IBccStage,
  id: unknown
): { step: IBccStep; index: number } | undefined {
  const index = stage.steps.findIndex(step => step.id === id);
  return index < 0 ? undefined : { step: stage.steps[index], index };
}

/** The code of behavior `iteration` of a step; every cell reloads the data if the kernel lacks it. */
export function behaviorCode(
  step: IBccStep,
  iteration: number,
  csvPath: string
): string {
  const load = [
    'import pandas as pd',
    'if "sales_df" not in globals():',
    `    sales_df = pd.read_csv(${pyString(csvPath)})`
  ];
  if (iteration <= 1) {
    return [...load, step.build].join('\n');
  }
  const [head, tail] = doneMarker(step.id).split('-');
  return [
    ...load,
    step.check,
    `print(${pyString(head)} + ${pyString('-' + tail)})`
  ].join('\n');
}
