/**
 * The pandas code the planner writes. Each step has an ordered list of approaches; a retry after a
 * failure takes the first approach not tried yet that fits the error, so it never repeats itself.
 */

export interface ICodeContext {
  /** The data file as the user gave it. */
  dataPath: string;
  /** The frame to analyse: `df_clean` once cleaning produced it, else `df`. */
  frame: string;
  /** The column the task asks about (e.g. `SalePrice`), if the task names one. */
  target: string | null;
  /** The task description, quoted in the findings report. */
  task: string;
}

export interface IApproach {
  id: string;
  /** One line for the notebook: what this attempt does differently. */
  summary: string;
  /** Error texts this approach is meant to get around; an empty list fits any error. */
  addresses: RegExp[];
  code(context: ICodeContext): string;
}

/** A Python string literal; JSON's escapes are all valid Python escapes. */
export function pyString(value: string): string {
  return JSON.stringify(value);
}

const lines = (...parts: string[]): string => parts.join('\n');

const LOAD: IApproach[] = [
  {
    id: 'read_csv_default',
    summary: 'Read the file with pandas defaults (comma separated, UTF-8).',
    addresses: [],
    code: ({ dataPath }) =>
      lines(
        'import pandas as pd',
        '',
        `DATA_PATH = ${pyString(dataPath)}`,
        'df = pd.read_csv(DATA_PATH)',
        'print(f"Loaded {DATA_PATH}: {df.shape[0]} rows x {df.shape[1]} columns")',
        'df.info()',
        'df.head()'
      )
  },
  {
    id: 'read_csv_sniffed',
    summary:
      'Locate the file if the path is relative to another folder, let the Python engine detect the separator, and replace undecodable bytes.',
    addresses: [
      /FileNotFound|No such file/i,
      /ParserError|Expected \d+ fields|tokeniz/i,
      /UnicodeDecodeError|codec/i
    ],
    code: ({ dataPath }) =>
      lines(
        'from pathlib import Path',
        '',
        'import pandas as pd',
        '',
        `DATA_PATH = ${pyString(dataPath)}`,
        'data_file = Path(DATA_PATH)',
        'if not data_file.exists():',
        '    matches = sorted(Path.cwd().glob(f"**/{data_file.name}"))',
        '    if not matches:',
        '        raise FileNotFoundError(f"{DATA_PATH} not found under {Path.cwd()}")',
        '    data_file = matches[0]',
        '    print(f"Using {data_file}")',
        'df = pd.read_csv(data_file, sep=None, engine="python", encoding="utf-8", encoding_errors="replace")',
        'print(f"Loaded {data_file}: {df.shape[0]} rows x {df.shape[1]} columns")',
        'df.info()',
        'df.head()'
      )
  },
  {
    id: 'read_csv_latin1_skip_bad_lines',
    summary:
      'Read as Latin-1 with a detected separator and skip malformed lines, reporting how many were dropped.',
    addresses: [
      /UnicodeDecodeError|codec/i,
      /ParserError|Expected \d+ fields|tokeniz/i
    ],
    code: ({ dataPath }) =>
      lines(
        'import csv',
        '',
        'import pandas as pd',
        '',
        `DATA_PATH = ${pyString(dataPath)}`,
        'with open(DATA_PATH, encoding="latin-1") as handle:',
        '    sample = handle.read(65536)',
        'try:',
        '    separator = csv.Sniffer().sniff(sample, delimiters=",;\\t|").delimiter',
        'except csv.Error:',
        '    separator = ","',
        'df = pd.read_csv(DATA_PATH, sep=separator, encoding="latin-1", on_bad_lines="skip")',
        'line_count = sum(1 for _ in open(DATA_PATH, encoding="latin-1")) - 1',
        'print(f"Loaded {df.shape[0]} of {line_count} lines with separator {separator!r}")',
        'df.info()',
        'df.head()'
      )
  }
];

const MISSING: IApproach[] = [
  {
    id: 'isna_summary',
    summary: 'Count missing values per column with `isna()`.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        'import pandas as pd',
        '',
        `missing_counts = ${frame}.isna().sum()`,
        'missing_summary = {',
        `    str(column): {"count": int(count), "rate": round(float(count) / max(len(${frame}), 1), 4)}`,
        '    for column, count in missing_counts.items()',
        '    if count > 0',
        '}',
        `print(f"{len(missing_summary)} of {${frame}.shape[1]} columns have missing values")`,
        'pd.DataFrame(missing_summary).T.sort_values("count", ascending=False)'
      )
  },
  {
    id: 'guarded_column_loop',
    summary:
      'Count column by column inside try/except so one odd column cannot stop the summary.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        'missing_summary = {}',
        `row_count = max(len(${frame}), 1)`,
        `for column in ${frame}.columns:`,
        '    try:',
        `        count = int(${frame}[column].isna().sum())`,
        '    except Exception as error:',
        '        print(f"Skipped {column}: {error}")',
        '        continue',
        '    if count:',
        '        missing_summary[str(column)] = {"count": count, "rate": round(count / row_count, 4)}',
        'for column, info in sorted(missing_summary.items(), key=lambda item: -item[1]["count"]):',
        "    print(f\"{column:<20} {info['count']:>6} ({info['rate']:.1%})\")"
      )
  }
];

const IMPUTE: IApproach[] = [
  {
    id: 'median_and_missing_label',
    summary:
      'Drop columns that are mostly empty, fill numeric gaps with the median and label other gaps "Missing"; parse date columns.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        'import pandas as pd',
        '',
        '',
        'def impute_missing_values(frame):',
        '    clean = frame.copy()',
        '    log = {}',
        '    mostly_empty = [column for column in clean.columns if clean[column].isna().mean() > 0.5]',
        '    clean = clean.drop(columns=mostly_empty)',
        '    for column in mostly_empty:',
        '        log[str(column)] = "dropped (more than 50% missing)"',
        '    for column in clean.columns:',
        '        if "date" in str(column).lower() and not pd.api.types.is_numeric_dtype(clean[column]):',
        '            clean[column] = pd.to_datetime(clean[column], errors="coerce")',
        '            log.setdefault(str(column), "parsed as datetime")',
        '    for column in clean.columns:',
        '        gaps = int(clean[column].isna().sum())',
        '        if not gaps:',
        '            continue',
        '        if pd.api.types.is_numeric_dtype(clean[column]):',
        '            median = clean[column].median()',
        '            clean[column] = clean[column].fillna(median)',
        '            log[str(column)] = f"{gaps} filled with median {median:g}"',
        '        elif pd.api.types.is_datetime64_any_dtype(clean[column]):',
        '            clean[column] = clean[column].fillna(clean[column].median())',
        '            log[str(column)] = f"{gaps} filled with the median date"',
        '        else:',
        '            clean[column] = clean[column].astype("object").fillna("Missing")',
        '            log[str(column)] = f"{gaps} labelled \'Missing\'"',
        '    return clean, log',
        '',
        '',
        `df_clean, imputation_log = impute_missing_values(${frame})`,
        'print(f"df_clean: {df_clean.shape[0]} rows x {df_clean.shape[1]} columns, {int(df_clean.isna().sum().sum())} missing values left")',
        'pd.Series(imputation_log, name="action").to_frame()'
      )
  },
  {
    id: 'select_dtypes_fill',
    summary:
      'Fill numeric columns selected with `select_dtypes` in one `fillna`, then the remaining columns one by one in try/except.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        `df_clean = ${frame}.copy()`,
        'imputation_log = {}',
        'numeric = df_clean.select_dtypes(include="number")',
        'numeric_gaps = numeric.isna().sum()',
        'df_clean[numeric.columns] = numeric.fillna(numeric.median())',
        'for column, gaps in numeric_gaps[numeric_gaps > 0].items():',
        '    imputation_log[str(column)] = f"{int(gaps)} filled with median"',
        'for column in df_clean.columns.difference(numeric.columns):',
        '    gaps = int(df_clean[column].isna().sum())',
        '    if not gaps:',
        '        continue',
        '    try:',
        '        df_clean[column] = df_clean[column].astype("object").fillna("Missing")',
        '        imputation_log[str(column)] = f"{gaps} labelled \'Missing\'"',
        '    except Exception as error:',
        '        imputation_log[str(column)] = f"left as is: {error}"',
        'print(f"df_clean: {df_clean.shape[0]} rows x {df_clean.shape[1]} columns")',
        'imputation_log'
      )
  },
  {
    id: 'drop_incomplete',
    summary:
      'Fall back to dropping: remove columns missing over half their values, then rows that still have gaps.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        `before = ${frame}.shape`,
        `df_clean = ${frame}.dropna(axis=1, thresh=max(1, len(${frame}) // 2)).dropna(axis=0)`,
        'imputation_log = {"strategy": "dropna", "before": list(before), "after": list(df_clean.shape)}',
        'print(f"Kept {df_clean.shape[0]} of {before[0]} rows and {df_clean.shape[1]} of {before[1]} columns")',
        'imputation_log'
      )
  }
];

/** Identifier-like columns carry no distribution worth describing. */
const DROP_IDS = (frame: string): string =>
  `id_columns = [column for column in ${frame}.columns if str(column).lower() in ("id", "index") or str(column).lower().endswith("_id")]`;

const DISTRIBUTIONS: IApproach[] = [
  {
    id: 'describe_numeric',
    summary:
      'Describe every numeric column (quantiles, skew), list the top categories, and plot histograms when matplotlib is available.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        'import pandas as pd',
        '',
        DROP_IDS(frame),
        `numeric_frame = ${frame}.select_dtypes(include="number").drop(columns=id_columns)`,
        'numeric_summary = numeric_frame.describe().T',
        'numeric_summary["skew"] = numeric_frame.skew()',
        'numeric_summary = numeric_summary.round(2)',
        `categorical_columns = [column for column in ${frame}.columns if not pd.api.types.is_numeric_dtype(${frame}[column]) and not pd.api.types.is_datetime64_any_dtype(${frame}[column])]`,
        'print("\\n".join(',
        '    f"{column}: " + ", ".join(f"{value} ({count})" for value, count in ' +
          `${frame}[column].value_counts().head(5).items())`,
        '    for column in categorical_columns',
        '))',
        'try:',
        '    import matplotlib.pyplot as plt',
        'except ImportError:',
        '    plt = None',
        'if plt is not None:',
        '    numeric_frame.hist(figsize=(14, 10), bins=30)',
        '    plt.tight_layout()',
        '    plt.show()',
        'numeric_summary'
      )
  },
  {
    id: 'coerce_to_numeric',
    summary:
      'Coerce columns with `pd.to_numeric(errors="coerce")` and describe those that hold numbers.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        'import pandas as pd',
        '',
        DROP_IDS(frame),
        `numeric_frame = ${frame}.drop(columns=id_columns).apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")`,
        'numeric_summary = numeric_frame.describe().T.round(2)',
        'print(f"{numeric_summary.shape[0]} numeric columns described")',
        'numeric_summary'
      )
  }
];

const CORRELATIONS: IApproach[] = [
  {
    id: 'corr_numeric_only',
    summary:
      'Pearson correlations between numeric columns (`numeric_only=True`), strongest pairs first.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        'import numpy as np',
        '',
        DROP_IDS(frame),
        `correlations = ${frame}.drop(columns=id_columns).corr(numeric_only=True)`,
        'upper = correlations.where(np.triu(np.ones(correlations.shape, dtype=bool), k=1))',
        'strongest_pairs = upper.stack().sort_values(key=abs, ascending=False).head(10)',
        'print("Strongest correlations:")',
        'print(strongest_pairs.round(3).to_string())',
        'correlations.round(2)'
      )
  },
  {
    id: 'corr_select_dtypes',
    summary:
      'Select numeric columns with `select_dtypes` first, drop constant ones, then correlate.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        DROP_IDS(frame),
        `numeric_frame = ${frame}.select_dtypes(include="number").drop(columns=id_columns)`,
        'numeric_frame = numeric_frame.loc[:, numeric_frame.nunique() > 1]',
        'correlations = numeric_frame.corr()',
        'print(f"Correlation matrix {correlations.shape}")',
        'correlations.round(2)'
      )
  },
  {
    id: 'corr_coerced_spearman',
    summary:
      'Coerce to numbers and use rank (Spearman) correlation with a minimum of 10 paired values.',
    addresses: [],
    code: ({ frame }) =>
      lines(
        'import pandas as pd',
        '',
        DROP_IDS(frame),
        `numeric_frame = ${frame}.drop(columns=id_columns).apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")`,
        'correlations = numeric_frame.corr(method="spearman", min_periods=10)',
        'print(f"Spearman correlation matrix {correlations.shape}")',
        'correlations.round(2)'
      )
  }
];

const TARGET_DRIVERS: IApproach[] = [
  {
    id: 'target_corr_and_group_means',
    summary:
      'Correlate each numeric column with the target and compare the target mean across the levels of each categorical column.',
    addresses: [],
    code: ({ frame, target }) =>
      lines(
        'import pandas as pd',
        '',
        `TARGET = ${pyString(target ?? '')}`,
        `if TARGET not in ${frame}.columns:`,
        `    raise KeyError(f"Target column {TARGET!r} not found; columns are {list(${frame}.columns)}")`,
        DROP_IDS(frame),
        `numeric_frame = ${frame}.select_dtypes(include="number").drop(columns=id_columns)`,
        'target_correlations = numeric_frame.corr()[TARGET].drop(TARGET).dropna().sort_values(key=abs, ascending=False)',
        '',
        '',
        'def is_category(values):',
        '    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):',
        '        return False',
        '    return values.nunique() <= 30',
        '',
        '',
        'def target_spread(frame, column):',
        '    means = frame.groupby(column)[TARGET].mean()',
        '    return round(float(means.max() - means.min()), 2)',
        '',
        '',
        `category_effects = pd.Series({str(column): target_spread(${frame}, column) for column in ${frame}.columns if is_category(${frame}[column])}, dtype="float64")`,
        'category_effects = category_effects.sort_values(ascending=False)',
        'print(f"Numeric columns most correlated with {TARGET}:")',
        'print(target_correlations.head(8).round(3).to_string())',
        'print(f"\\nCategorical columns with the largest spread of mean {TARGET}:")',
        'print(category_effects.head(8).to_string())'
      )
  },
  {
    id: 'target_coerced',
    summary:
      'Coerce the target and the features to numbers first, then correlate; skip the categorical comparison.',
    addresses: [],
    code: ({ frame, target }) =>
      lines(
        'import pandas as pd',
        '',
        `TARGET = ${pyString(target ?? '')}`,
        DROP_IDS(frame),
        `numeric_frame = ${frame}.drop(columns=id_columns).apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")`,
        'if TARGET not in numeric_frame.columns:',
        '    raise KeyError(f"Target column {TARGET!r} is not numeric or not present")',
        'target_correlations = numeric_frame.corr()[TARGET].drop(TARGET).dropna().sort_values(key=abs, ascending=False)',
        'category_effects = pd.Series(dtype="float64")',
        'print(target_correlations.head(8).round(3).to_string())'
      )
  }
];

/** Reads every earlier result through `globals().get` so the report still builds when a step was skipped. */
const FINDINGS: IApproach[] = [
  {
    id: 'build_report',
    summary:
      'Assemble the findings from the variables the earlier steps produced into a Markdown string.',
    addresses: [],
    code: ({ frame, target, task }) =>
      lines(
        'import numpy as np',
        'import pandas as pd',
        '',
        `TASK = ${pyString(task)}`,
        `TARGET = ${pyString(target ?? '')}`,
        '',
        '',
        'def build_findings_report(data):',
        '    results = globals()',
        '    report = ["## Findings", "", f"**Task:** {TASK}", "", f"- The analysed data has {data.shape[0]} rows and {data.shape[1]} columns."]',
        '    missing = results.get("missing_summary") or {}',
        '    if missing:',
        '        worst = sorted(missing.items(), key=lambda item: -item[1]["count"])[:3]',
        '        report.append(f"- {len(missing)} columns had missing values; most affected: " + ", ".join(f"{name} ({info[\'rate\']:.0%})" for name, info in worst) + ".")',
        '    log = results.get("imputation_log")',
        '    if isinstance(log, dict) and log and "strategy" not in log:',
        '        report.append(f"- Cleaning touched {len(log)} columns (see `imputation_log`).")',
        '    drivers = results.get("target_correlations")',
        '    if TARGET and drivers is not None and len(drivers):',
        '        report.append(f"- Numeric drivers of {TARGET} (Pearson r): " + ", ".join(f"{name} ({value:+.2f})" for name, value in drivers.head(5).items()) + ".")',
        '    effects = results.get("category_effects")',
        '    if TARGET and effects is not None and len(effects):',
        '        report.append(f"- Categories that move the mean {TARGET} most: " + ", ".join(f"{name} (spread {value:,.0f})" for name, value in effects.head(3).items()) + ".")',
        '    matrix = results.get("correlations")',
        '    if matrix is not None and matrix.shape[0] > 1:',
        '        lower = pd.DataFrame(np.tril(np.ones(matrix.shape, dtype=bool)), index=matrix.index, columns=matrix.columns)',
        '        pairs = matrix.where(~lower).stack().sort_values(key=abs, ascending=False).head(3)',
        '        report.append("- Strongest pairwise correlations: " + ", ".join(f"{a} / {b} ({value:+.2f})" for (a, b), value in pairs.items()) + ".")',
        '    summary = results.get("numeric_summary")',
        '    if summary is not None and "skew" in summary.columns:',
        '        skewed = summary["skew"].abs().sort_values(ascending=False).head(3)',
        '        report.append("- Most skewed numeric columns: " + ", ".join(f"{name} (skew {summary.loc[name, \'skew\']:+.1f})" for name in skewed.index) + ".")',
        '    return "\\n".join(report)',
        '',
        '',
        `findings_report = build_findings_report(${frame})`,
        'print(findings_report)'
      )
  }
];

export const APPROACHES: Record<string, IApproach[]> = {
  load_data: LOAD,
  missing_values: MISSING,
  impute_missing: IMPUTE,
  distributions: DISTRIBUTIONS,
  correlations: CORRELATIONS,
  target_drivers: TARGET_DRIVERS,
  findings_report: FINDINGS
};
