/**
 * What the reference planner's pandas code is made of: the approach type and the snippets every step shares
 * (imports that degrade to a note, the columns line, plot set-up, figure records).
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

export const lines = (...parts: string[]): string => parts.join('\n');

/**
 * Imports pandas, or prints how to install it and leaves `pd` as None: without pandas nothing can be
 * analysed, and a note says so better than a traceback per attempt. The planner recognises the note.
 */
export const PANDAS_SETUP = lines(
  'try:',
  '    import pandas as pd',
  'except ImportError as error:',
  '    pd = None',
  '    print(f"pandas cannot be imported in this kernel ({error}), so the data cannot be loaded. Install it in the kernel\'s environment: pip install pandas matplotlib")'
);

/** Matches the note above, and the error of code that imports pandas without it. */
export const PANDAS_MISSING =
  // The guard's message as printed, at the start of a line: a traceback quotes the code around it.
  /^pandas cannot be imported in this kernel|No module named ['"]?pandas\b/m;

/** One line the planner reads the columns from (`columnsIn`), whatever their names. */
export const PRINT_COLUMNS =
  'print("Columns:", json.dumps([str(column) for column in df.columns], ensure_ascii=False))';

/** Identifier-like columns carry no distribution worth describing. */
export const DROP_IDS = (frame: string): string =>
  `id_columns = [column for column in ${frame}.columns if str(column).lower() in ("id", "index") or str(column).lower().endswith("_id")]`;

/** The non-id columns coerced to numbers (needs `DROP_IDS` and pandas as `pd` before it). */
export const COERCED_NUMERIC = (frame: string): string =>
  `numeric_frame = ${frame}.drop(columns=id_columns).apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")`;

/**
 * Imports pyplot, or prints a note and leaves `plt` as None so the cell still produces its results.
 * Figures get an explicit white face: JupyterLab's dark theme would otherwise show dark text on dark.
 * Glyphs that DejaVu Sans lacks (Chinese column names) come from the installed CJK fonts listed after it.
 */
export const PLOT_SETUP = lines(
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
export const recordFigure = (key: string, caption: string): string =>
  `    analysis_figures = {**globals().get("analysis_figures", {}), ${pyString(key)}: ${caption}}`;
