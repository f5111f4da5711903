/**
 * What a task asks for that the demo's standard exploratory analysis does not do: a forecast, a model,
 * a classification, clusters, a statistical test, a comparison. The findings open with it, so a user
 * who asked for a forecast is told that none was made rather than handed an exploration as the answer.
 * Tasks may be written in English or Chinese; a word counts whole ("contest" is no test).
 */

export interface IUnmetIntent {
  id: string;
  /** What the task asks for, as in "the task asks for a forecast". */
  asked: string;
  /** What the demo did not do, as in "it made no forecast". */
  notDone: string;
}

const INTENTS: ReadonlyArray<IUnmetIntent & { patterns: RegExp[] }> = [
  {
    id: 'forecast',
    asked: 'a forecast',
    notDone: 'made no forecast',
    patterns: [
      /\b(?:forecast(?:s|ed|ing)?|project(?:ion|ions)?\s+(?:of|for)|next\s+(?:month|quarter|year|week)s?)\b/,
      /预测|预估|预计|预报/
    ]
  },
  {
    id: 'predict',
    asked: 'a prediction',
    notDone: 'made no prediction',
    patterns: [/\bpredict(?:s|ed|ing|ion|ions|ive)?\b/]
  },
  {
    id: 'model',
    asked: 'a model',
    notDone: 'fitted no model',
    patterns: [
      /\b(?:model(?:s|led|ling|ed|ing)?|regression|fit\s+an?\b|train(?:s|ed|ing)?)\b/,
      /建模|模型|回归/
    ]
  },
  {
    id: 'classify',
    asked: 'a classification',
    notDone: 'classified nothing',
    patterns: [/\b(?:classif(?:y|ies|ied|ying|ication|ier|iers))\b/, /分类/]
  },
  {
    id: 'cluster',
    asked: 'clusters',
    notDone: 'found no clusters',
    patterns: [/\bcluster(?:s|ed|ing)?\b/, /聚类|分群/]
  },
  {
    id: 'test',
    asked: 'a statistical test',
    notDone: 'ran no statistical test',
    patterns: [
      /\b(?:tests?|tested|testing|significan(?:t|ce)|hypothes(?:is|es)|p-?values?|t-test|anova|chi-?squared?)\b/,
      /检验|显著/
    ]
  },
  {
    id: 'compare',
    asked: 'a comparison',
    notDone: 'compared no groups directly',
    patterns: [
      /\b(?:compar(?:e|es|ed|ing|ison|isons)|versus|vs\.?|differ(?:s|ence|ences)?\s+between)\b/,
      /比较|对比/
    ]
  }
];

/** What the task asks for that an exploratory analysis does not do, in the order of `INTENTS`. */
export function unmetIntents(task: string): IUnmetIntent[] {
  const text = task.normalize('NFKC').toLowerCase();
  return INTENTS.filter(intent =>
    intent.patterns.some(pattern => pattern.test(text))
  ).map(({ id, asked, notDone }) => ({ id, asked, notDone }));
}

/** "a", "a and b", "a, b and c". */
function listed(items: readonly string[]): string {
  return items.length < 2
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * The line the findings open with when the task asks for what the demo does not do, e.g. "**Not done:**
 * the task asks for a forecast. The built-in demo planner made no forecast: it only explored the data
 * ...". Null when the task asks for nothing beyond an exploration.
 */
export function caveatOf(task: string): string | null {
  const intents = unmetIntents(task);
  if (!intents.length) {
    return null;
  }
  return (
    `**Not done:** the task asks for ${listed(intents.map(i => i.asked))}. ` +
    `The built-in demo planner ${listed(intents.map(i => i.notDone))}: it only explored the data ` +
    '(missing values, distributions, correlations), as it does for every task. ' +
    'For the analysis the task asks for, use a planner that reads the task, such as the LLM planner.'
  );
}
