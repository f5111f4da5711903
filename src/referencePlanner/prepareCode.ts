/** The approaches of the steps that read and clean the data: loading, missing values, imputation. */

import {
  pyString,
  lines,
  PANDAS_SETUP,
  PRINT_COLUMNS,
  type IApproach
} from './pandasCode';

export const LOAD: IApproach[] = [
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

export const MISSING: IApproach[] = [
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

export const IMPUTE: IApproach[] = [
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
