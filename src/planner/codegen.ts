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
  /** What the task asks that this analysis does not do (`caveatOf`): the findings open with it. */
  caveat?: string | null;
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

/**
 * Imports pandas, or prints how to install it and leaves `pd` as None: without pandas nothing can be
 * analysed, and a note says so better than a traceback per attempt. The planner recognises the note.
 */
const PANDAS_SETUP = lines(
  'try:',
  '    import pandas as pd',
  'except ImportError as error:',
  '    pd = None',
  '    print(f"pandas cannot be imported in this kernel ({error}), so the data cannot be loaded. Install it in the kernel\'s environment: pip install pandas matplotlib")'
);

/** Matches the note above, and the error of code that imports pandas without it. */
export const PANDAS_MISSING =
  /pandas cannot be imported in this kernel|No module named ['"]?pandas\b/;

/** One line the planner reads the columns from (`columnsIn`), whatever their names. */
const PRINT_COLUMNS =
  'print("Columns:", json.dumps([str(column) for column in df.columns], ensure_ascii=False))';

const LOAD: IApproach[] = [
  {
    id: 'read_csv_default',
    summary: 'Read the file with pandas defaults (comma separated, UTF-8).',
    addresses: [],
    code: ({ dataPath }) =>
      lines(
        'import json',
        '',
        PANDAS_SETUP,
        '',
        `DATA_PATH = ${pyString(dataPath)}`,
        'if pd is not None:',
        '    df = pd.read_csv(DATA_PATH)',
        '    print(f"Loaded {DATA_PATH}: {df.shape[0]} rows x {df.shape[1]} columns")',
        `    ${PRINT_COLUMNS}`,
        '    df.info()',
        '    display(df.head())'
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
        'import json',
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
        PRINT_COLUMNS,
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
        'import json',
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
        PRINT_COLUMNS,
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
        '# Named columns: a frame without gaps gives an empty table, not a KeyError.',
        'pd.DataFrame.from_dict(missing_summary, orient="index", columns=["count", "rate"]).sort_values("count", ascending=False)'
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

/**
 * Imports pyplot, or prints a note and leaves `plt` as None so the cell still produces its results.
 * Figures get an explicit white face: JupyterLab's dark theme would otherwise show dark text on dark.
 * Glyphs that DejaVu Sans lacks (Chinese column names) come from the installed CJK fonts listed after it.
 */
const PLOT_SETUP = lines(
  'try:',
  '    import matplotlib.pyplot as plt',
  'except ImportError:',
  '    plt = None',
  '    print("matplotlib is not installed, so this step draws no figure (pip install matplotlib).")',
  'else:',
  '    import logging',
  '',
  '    from matplotlib import font_manager',
  '    from matplotlib.ticker import EngFormatter',
  '',
  '    # Chinese labels need a CJK font after DejaVu Sans; naming one that is not installed would print a warning.',
  '    installed_fonts = {font.name for font in font_manager.fontManager.ttflist}',
  '    cjk_candidates = ("Noto Sans CJK SC", "Source Han Sans SC", "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB",',
  '                      "SimHei", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Droid Sans Fallback", "Arial Unicode MS")',
  '    cjk_fonts = [name for name in cjk_candidates if name in installed_fonts]',
  '    if cjk_fonts:',
  '        # Some (WenQuanYi Zen Hei) have no regular weight, which matplotlib would report for every text size.',
  '        logging.getLogger("matplotlib.font_manager").addFilter(lambda record: "find font weight" not in record.getMessage())',
  '',
  '    plt.rcParams.update({"font.family": ["DejaVu Sans", *cjk_fonts], "font.size": 9,',
  '                         "figure.facecolor": "white", "axes.facecolor": "white", "savefig.facecolor": "white",',
  '                         "text.color": "#222222", "axes.labelcolor": "#222222", "xtick.color": "#222222",',
  '                         "ytick.color": "#222222", "axes.edgecolor": "#888888"})'
);

/** Records a drawn figure, so the findings report can point at it. */
const recordFigure = (key: string, caption: string): string =>
  `    analysis_figures = {**globals().get("analysis_figures", {}), ${pyString(key)}: ${caption}}`;

const DISTRIBUTIONS: IApproach[] = [
  {
    id: 'describe_numeric',
    summary:
      'Describe every numeric column (quantiles, skew), list the top categories, and plot the distributions of the target and the key columns (Figure 1).',
    addresses: [],
    code: ({ frame, target }) =>
      lines(
        'import math',
        '',
        'import pandas as pd',
        '',
        PLOT_SETUP,
        '',
        `TARGET = ${pyString(target ?? '')}`,
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
        '# The target first, then the columns most related to it (or the most spread out ones without a target).',
        'if TARGET in numeric_frame.columns:',
        '    ranked = numeric_frame.corr()[TARGET].drop(TARGET).abs().sort_values(ascending=False).index',
        '    plot_columns = [TARGET, *ranked[:7]]',
        'else:',
        '    plot_columns = list((numeric_frame.std() / numeric_frame.mean().abs().clip(lower=1e-9)).sort_values(ascending=False).index[:8])',
        'if plt is not None and plot_columns:',
        '    # At most three panels a row, about 8 inches wide: readable at the width of a notebook column.',
        '    grid_columns = min(3, len(plot_columns))',
        '    grid_rows = math.ceil(len(plot_columns) / grid_columns)',
        '    fig, axes = plt.subplots(grid_rows, grid_columns, figsize=(2.7 * grid_columns, 2.3 * grid_rows), squeeze=False)',
        '    for ax, column in zip(axes.flat, plot_columns):',
        '        color = "#dd8452" if column == TARGET else "#4c72b0"',
        '        ax.hist(numeric_frame[column].dropna(), bins=30, color=color, edgecolor="white")',
        '        ax.set_title(f"{column} (skew {numeric_frame[column].skew():+.1f})")',
        '        if numeric_frame[column].abs().max() >= 10_000:',
        '            ax.xaxis.set_major_formatter(EngFormatter())',
        '    for ax in axes.flat[len(plot_columns):]:',
        '        ax.set_visible(False)',
        '    fig.suptitle("Figure 1. Distributions of " + (f"{TARGET} (orange) and the columns most correlated with it" if TARGET in plot_columns else "the most spread-out numeric columns"))',
        '    fig.tight_layout()',
        '    plt.show()',
        recordFigure(
          'distributions',
          '"Figure 1: distributions of " + ", ".join(map(str, plot_columns))'
        ),
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
      'Pearson correlations between numeric columns (`numeric_only=True`), strongest pairs first, drawn as a heatmap (Figure 2).',
    addresses: [],
    code: ({ frame, target }) =>
      lines(
        'import numpy as np',
        '',
        PLOT_SETUP,
        '',
        `TARGET = ${pyString(target ?? '')}`,
        DROP_IDS(frame),
        `correlations = ${frame}.drop(columns=id_columns).corr(numeric_only=True)`,
        'upper = correlations.where(np.triu(np.ones(correlations.shape, dtype=bool), k=1))',
        '# pandas 3 keeps the masked (NaN) cells in stack(); pandas 2 dropped them.',
        'strongest_pairs = upper.stack().dropna().sort_values(key=abs, ascending=False).head(10)',
        'print("Strongest correlations:")',
        'print(strongest_pairs.round(3).to_string())',
        '# At most 12 columns keep the heatmap readable: those closest to the target, else the most correlated overall.',
        'if TARGET in correlations.columns:',
        '    heat_columns = [TARGET, *correlations[TARGET].drop(TARGET).abs().sort_values(ascending=False).index[:11]]',
        'else:',
        '    heat_columns = list(correlations.abs().mean().sort_values(ascending=False).index[:12])',
        'shown = correlations.loc[heat_columns, heat_columns]',
        'if plt is not None and len(heat_columns) > 1:',
        '    fig, ax = plt.subplots(figsize=(min(8.0, 1.0 + 0.62 * len(heat_columns)), min(7.0, 0.6 + 0.55 * len(heat_columns))))',
        '    image = ax.imshow(shown.to_numpy(), cmap="RdBu_r", vmin=-1, vmax=1)',
        '    ax.set_xticks(range(len(heat_columns)), [str(c) for c in heat_columns], rotation=45, ha="right")',
        '    ax.set_yticks(range(len(heat_columns)), [str(c) for c in heat_columns])',
        '    for row in range(len(heat_columns)):',
        '        for col in range(len(heat_columns)):',
        '            value = shown.iat[row, col]',
        '            ax.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=7, color="white" if abs(value) > 0.6 else "#222222")',
        '    fig.colorbar(image, ax=ax, shrink=0.8, label="Pearson r")',
        '    ax.set_title("Figure 2. Correlations between numeric columns")',
        '    fig.tight_layout()',
        '    plt.show()',
        recordFigure(
          'correlations',
          'f"Figure 2: correlation heatmap of {len(heat_columns)} numeric columns"'
        ),
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
      'Correlate each numeric column with the target, compare the target mean across the levels of each categorical column, and plot the target against its strongest drivers (Figure 3).',
    addresses: [],
    code: ({ frame, target }) =>
      lines(
        'import pandas as pd',
        '',
        PLOT_SETUP,
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
        'print(category_effects.head(8).to_string())',
        'drivers = list(target_correlations.index[:3])',
        'top_category = category_effects.index[0] if len(category_effects) else None',
        'panels = len(drivers) + (top_category is not None)',
        'if plt is not None and panels:',
        '    # Two panels a row, 8 inches wide: readable at the width of a notebook column.',
        '    grid_columns = min(2, panels)',
        '    grid_rows = -(-panels // grid_columns)',
        '    fig, axes = plt.subplots(grid_rows, grid_columns, figsize=(4.0 * grid_columns, 3.2 * grid_rows), squeeze=False)',
        '    panel_axes = list(axes.flat)',
        '    for ax in panel_axes[panels:]:',
        '        ax.set_visible(False)',
        '    for ax, column in zip(panel_axes, drivers):',
        `        ax.scatter(${frame}[column], ${frame}[TARGET], s=8, alpha=0.5, color="#4c72b0")`,
        '        ax.set_xlabel(str(column))',
        '        ax.set_ylabel(TARGET)',
        '        ax.set_title(f"{column}: r = {target_correlations[column]:+.2f}")',
        `    if ${frame}[TARGET].abs().max() >= 10_000:`,
        '        for ax in panel_axes[:panels]:',
        '            ax.yaxis.set_major_formatter(EngFormatter())',
        '    if top_category is not None:',
        `        groups = ${frame}[[top_category, TARGET]].dropna().groupby(top_category)[TARGET]`,
        '        levels = groups.median().sort_values().index',
        '        ax = panel_axes[panels - 1]',
        '        ax.boxplot([groups.get_group(level) for level in levels], showfliers=False)',
        '        ax.set_xticks(range(1, len(levels) + 1), [str(level) for level in levels], rotation=45, ha="right")',
        '        ax.set_xlabel(top_category)',
        '        ax.set_ylabel(TARGET)',
        '        ax.set_title(f"{TARGET} by {top_category}")',
        '    fig.suptitle(f"Figure 3. {TARGET} against its strongest drivers")',
        '    fig.tight_layout()',
        '    plt.show()',
        recordFigure(
          'drivers',
          'f"Figure 3: {TARGET} against " + ", ".join(map(str, drivers + ([top_category] if top_category is not None else [])))'
        )
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
    code: ({ frame, target, task, caveat }) =>
      lines(
        'import numpy as np',
        'import pandas as pd',
        'from IPython.display import display',
        '',
        `TASK = ${pyString(task)}`,
        `TARGET = ${pyString(target ?? '')}`,
        `NOT_DONE = ${pyString(caveat ?? '')}`,
        '',
        '',
        'def build_findings_report(data):',
        '    results = globals()',
        '    figures = results.get("analysis_figures") or {}',
        '    see = lambda key, number: f" (Figure {number})" if key in figures else ""',
        '    report = ["## Findings", "", *([NOT_DONE, ""] if NOT_DONE else []), f"**Task:** {TASK}", ""]',
        '    report.append(f"- The analysed data has {data.shape[0]} rows and {data.shape[1]} columns.")',
        '    if not TARGET:',
        '        report.append("- No target column was given (the Run dialog\'s Target column), so no column was related to a target.")',
        '    missing = results.get("missing_summary") or {}',
        '    if missing:',
        '        worst = sorted(missing.items(), key=lambda item: -item[1]["count"])[:3]',
        '        report.append(f"- {len(missing)} columns had missing values; most affected: " + ", ".join(f"{name} ({info[\'rate\']:.0%})" for name, info in worst) + ".")',
        '    log = results.get("imputation_log")',
        '    if isinstance(log, dict) and log and "strategy" not in log:',
        '        report.append(f"- Cleaning touched {len(log)} columns (see `imputation_log`).")',
        '    drivers = results.get("target_correlations")',
        '    if TARGET and drivers is not None and len(drivers):',
        '        report.append(f"- Numeric drivers of {TARGET} (Pearson r): " + ", ".join(f"{name} ({value:+.2f})" for name, value in drivers.head(5).items()) + see("drivers", 3) + ".")',
        '    effects = results.get("category_effects")',
        '    if TARGET and effects is not None and len(effects):',
        '        report.append(f"- Categories that move the mean {TARGET} most: " + ", ".join(f"{name} (spread {value:,.0f})" for name, value in effects.head(3).items()) + see("drivers", 3) + ".")',
        '    matrix = results.get("correlations")',
        '    if matrix is not None and matrix.shape[0] > 1:',
        '        lower = pd.DataFrame(np.tril(np.ones(matrix.shape, dtype=bool)), index=matrix.index, columns=matrix.columns)',
        '        pairs = matrix.where(~lower).stack().dropna().sort_values(key=abs, ascending=False).head(3)',
        '        report.append("- Strongest pairwise correlations: " + ", ".join(f"{a} / {b} ({value:+.2f})" for (a, b), value in pairs.items()) + see("correlations", 2) + ".")',
        '    summary = results.get("numeric_summary")',
        '    if summary is not None and "skew" in summary.columns:',
        '        skewed = summary["skew"].abs().sort_values(ascending=False).head(3)',
        '        report.append("- Most skewed numeric columns: " + ", ".join(f"{name} (skew {summary.loc[name, \'skew\']:+.1f})" for name in skewed.index) + see("distributions", 1) + ".")',
        '    if figures:',
        '        report += ["", "### Figures", "", *(f"- {caption} (above, in its step)." for caption in figures.values())]',
        '    return "\\n".join(report)',
        '',
        '',
        `findings_report = build_findings_report(${frame})`,
        '# Shown once, as the Markdown cell that follows; the plain text is what the planner reads.',
        'display({"text/markdown": "*The findings are written out below (and kept in `findings_report`).*", "text/plain": findings_report}, raw=True)'
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
