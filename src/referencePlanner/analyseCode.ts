/** The approaches of the steps that analyse the cleaned data: distributions, correlations, the target's drivers, the findings report. */

import {
  pyString,
  lines,
  DROP_IDS,
  COERCED_NUMERIC,
  PLOT_SETUP,
  recordFigure,
  type IApproach
} from './pandasCode';

export const DISTRIBUTIONS: IApproach[] = [
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
        COERCED_NUMERIC(frame),
        'numeric_summary = numeric_frame.describe().T.round(2)',
        'print(f"{numeric_summary.shape[0]} numeric columns described")',
        'numeric_summary'
      )
  }
];

export const CORRELATIONS: IApproach[] = [
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
        COERCED_NUMERIC(frame),
        'correlations = numeric_frame.corr(method="spearman", min_periods=10)',
        'print(f"Spearman correlation matrix {correlations.shape}")',
        'correlations.round(2)'
      )
  }
];

export const TARGET_DRIVERS: IApproach[] = [
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
        COERCED_NUMERIC(frame),
        'if TARGET not in numeric_frame.columns:',
        '    raise KeyError(f"Target column {TARGET!r} is not numeric or not present")',
        'target_correlations = numeric_frame.corr()[TARGET].drop(TARGET).dropna().sort_values(key=abs, ascending=False)',
        'category_effects = pd.Series(dtype="float64")',
        'print(target_correlations.head(8).round(3).to_string())'
      )
  }
];

/** Reads every earlier result through `globals().get` so the report still builds when a step was skipped. */
export const FINDINGS: IApproach[] = [
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
