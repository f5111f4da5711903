"""A run's memory, for the model's next request: what the steps done so far created and printed (newest
first, within a budget of characters), the code each behavior ran, and the tries of a step that failed, with
what is now known (a missing column: the real columns; an undefined name: the names defined)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from .contract import TEXT_DTYPES
from .observation import ERROR_KIND, error_line
from .prompts import as_data

CONTEXT_BUDGET = 1800
PRINTED_PER_STEP = 500


def normalized(code: str) -> str:
    """Code compared as written, whatever its whitespace."""
    return " ".join(code.split())


@dataclass
class StepRecord:
    step_id: str
    name: str
    created: dict[str, str]
    printed: str


@dataclass
class FailedTry:
    code: str
    reason: str


@dataclass
class RunMemory:
    done: list[StepRecord] = field(default_factory=list)
    failed: dict[str, list[FailedTry]] = field(default_factory=dict)
    # The code each behavior sent: (step id, behavior id) -> code.
    code: dict[tuple[str, str], str] = field(default_factory=dict)

    def sent(self, step_id: str, behavior_id: str, code: str) -> None:
        self.code[(step_id, behavior_id)] = code
        if len(self.code) > 200:
            self.code.pop(next(iter(self.code)))

    def achieved(self, step_id: str, name: str, created: dict[str, Any], printed: str) -> None:
        self.done = [record for record in self.done if record.step_id != step_id]
        shown = {key: _short(value) for key, value in created.items()}
        self.done.append(StepRecord(step_id, name, shown, _tail(printed, PRINTED_PER_STEP)))

    def failed_try(self, step_id: str, behavior_id: str, reason: str) -> None:
        code = self.code.get((step_id, behavior_id), "")
        if code:
            self.failed.setdefault(step_id, []).append(FailedTry(code, reason))

    def tries(self, step_id: str) -> list[FailedTry]:
        return self.failed.get(step_id, [])

    def repeat_of(self, step_id: str, code: str) -> FailedTry | None:
        """The earlier failed try of this step whose code this is (whitespace aside)."""
        wanted = normalized(code)
        return next((tried for tried in self.tries(step_id) if normalized(tried.code) == wanted), None)

    def context(self, budget: int = CONTEXT_BUDGET) -> str:
        """The steps done so far, newest first, as long as they fit in `budget` characters."""
        lines: list[str] = []
        used = 0
        for record in reversed(self.done):
            created = ", ".join(f"`{name}` = {value}" for name, value in record.created.items()) or "nothing new"
            entry = f"- {record.name}: created {created}"
            if record.printed:
                entry += "; printed:\n" + "\n".join(f"    {line}" for line in record.printed.splitlines())
            if used + len(entry) > budget:
                if not lines:
                    lines.append(entry[:budget])
                break
            lines.append(entry)
            used += len(entry)
        return "\n".join(lines)


# What a failed check's reason (CONTRACTS.md §4) asks of the next try.
_CHECK_HINTS = (
    ("row number where a label was asked", "Store the label itself: take the index label of a Series indexed by "
     "that column (for example its .idxmax()), not a position among the rows of df."),
    ("not a value of", "Store one of the column's own values, spelled as in the data."),
    ("not one of:", "Store exactly one of the allowed values after 'not one of:', spelled as given, not a sentence."),
    ("not rounded to", "Round it with round(value, decimals) and store the rounded Python float."),
    ("not an integer", "Store a Python int: int(value)."),
    ("not a number", "Store one number (a Python float or int), not a table, a Series or a text."),
    ("not a Series", "Make it a pandas Series: select one column (frame['column']) or call .squeeze()."),
    ("not a DataFrame", "Make it a pandas DataFrame: .to_frame() or .reset_index()."),
    ("not a text", "Store a non-empty str."),
    ("is missing", "Assign the variable with that exact name in this cell."),
)


# Arithmetic asked of text: a mean over every column, a correlation matrix of a frame with names in it.
_TEXT_ARITHMETIC = re.compile(
    r"reduction '\w+' with string dtype|dtype '(?:str|string|object)' does not support operation|"
    r"could not convert string to float|agg function failed \[how->\w+,dtype->object\]", re.IGNORECASE)


# The error line in a step's reason.
_IN_REASON = re.compile(rf"\b{ERROR_KIND}:.*")


# The import that defines a name a data-science cell uses, by module: the names it is imported under.
_LIBRARY_NAMES = {
    "import numpy as np": ("np",),
    "import pandas as pd": ("pd",),
    "import matplotlib.pyplot as plt": ("plt",),
    "import seaborn as sns": ("sns",),
    "import statsmodels.api as sm": ("sm",),
    "import math": ("math",),
    "from scipy import stats": ("stats",),
    "from scipy.stats import": ("pearsonr", "spearmanr", "kendalltau", "ttest_ind", "ttest_rel", "ttest_1samp",
                                "f_oneway", "chi2_contingency", "shapiro", "kstest", "normaltest", "zscore",
                                "skew", "kurtosis", "linregress", "mannwhitneyu", "iqr", "boxcox"),
    "from sklearn.linear_model import": ("LinearRegression", "LogisticRegression", "Ridge", "Lasso"),
    "from sklearn.ensemble import": ("RandomForestRegressor", "RandomForestClassifier",
                                     "GradientBoostingRegressor", "GradientBoostingClassifier"),
    "from sklearn.tree import": ("DecisionTreeRegressor", "DecisionTreeClassifier"),
    "from sklearn.neighbors import": ("KNeighborsClassifier", "KNeighborsRegressor"),
    "from sklearn.cluster import": ("KMeans", "DBSCAN"),
    "from sklearn.decomposition import": ("PCA",),
    "from sklearn.model_selection import": ("train_test_split", "cross_val_score", "KFold"),
    "from sklearn.preprocessing import": ("StandardScaler", "MinMaxScaler", "LabelEncoder", "OneHotEncoder"),
    "from sklearn.impute import": ("SimpleImputer",),
    "from sklearn.metrics import": ("mean_squared_error", "mean_absolute_error", "r2_score", "accuracy_score",
                                    "f1_score", "precision_score", "recall_score", "confusion_matrix",
                                    "silhouette_score"),
}


def _import_of(name: str) -> str | None:
    """The statement that imports `name` as data-science code uses it, or None for a name no library here
    defines."""
    for statement, names in _LIBRARY_NAMES.items():
        if name in names:
            return f"{statement} {name}" if statement.endswith(" import") else statement
    return None


# "'numpy.float64' object has no attribute 'iloc'", "'float' object has no attribute 'values'"
_SCALAR_OBJECT = re.compile(r"'(?:numpy\.)?(?:float|int)\d*' object has no attribute")


def known_now(error: str, columns: dict[str, str], variables: dict[str, Any], code: str = "") -> str:
    """What the kernel's error (or a failed check's reason) says is wrong, and the facts that fix it: the words
    are the planner's, the names from the data or the kernel (columns, keys, variables) are in data blocks.
    `code` is the code that failed, when the planner knows it."""
    hints = [hint for words, hint in _CHECK_HINTS if words in error]
    if hints and "Traceback" not in error:
        return hints[0]
    line = error_line(error)
    # A step's reason ("the code failed: KeyError: 'x'") holds the error line after its own words.
    found = _IN_REASON.search(line)
    line = found.group(0) if found else line
    name = line.split(":", 1)[0].rsplit(".", 1)[-1] if line else ""
    listed = ", ".join(f"{column} ({dtype})" for column, dtype in columns.items())
    if name == "KeyError" or (name == "AttributeError" and "DataFrame" in line):
        missing = re.findall(r"'([^']+)'", line.split(":", 1)[-1])
        if missing and missing[-1] in columns:
            # Seen on a small model: a grouped Series indexed by 'quarter', then ['quarter'] on it.
            return "\n".join([
                "This column of df is not a column of the object the code indexed with it:", as_data(missing[-1]),
                "A grouped result keeps the groups in its index (filter df first, or call .reset_index() and select "
                "on the frame it returns). Do not rename the columns of df."])
        lines = ["The code used a key that is not a column:", as_data(missing[-1])] if missing else []
        meant = _column_meant(missing[-1], columns) if missing else None
        if meant is not None:
            # DABench 359: 'wind_speed' for 'wind speed', written again on the retry.
            lines += ["The column of df it means is spelled:", as_data(meant)]
        if listed:
            lines += ["The columns of df are exactly:", as_data(listed)]
        return "\n".join(lines)
    if name == "NameError":
        defined = [key for key in variables if re.fullmatch(r"[A-Za-z_]\w*", key)]
        lines = ["Defined names:", as_data(", ".join(defined[:40])), "Define anything else in this cell."] \
            if defined else []
        undefined = re.search(r"name '(\w+)' is not defined", line)
        statement = _import_of(undefined.group(1)) if undefined else None
        if statement:
            # DABench 275 and 428: `RandomForestRegressor` and `stats` used without their import, again on the retry.
            lines = ["The name comes from a library. Import it in this cell:", as_data(statement), *lines[:2]]
        return "\n".join(lines)
    if (name == "IndexError" and "invalid index to scalar variable" in line) or \
            (name == "AttributeError" and _SCALAR_OBJECT.search(line)):
        # DABench 516 (df['Fare'].skew()[0]) and 530 (a correlation's .iloc[0]), each written again on the retry.
        return ("The value the code indexed is already one number (a NumPy or Python scalar, as .skew(), .mean() "
                "and .corr() of two columns return): use it as it is, without [0], .iloc or .values after it.")
    if name in ("TypeError", "ValueError") and _TEXT_ARITHMETIC.search(line):
        hint = [
            "Some columns hold text: compute on the numeric columns only (df.select_dtypes('number'), or "
            "numeric_only=True in mean(), sum(), corr() and groupby(...).mean()), or select the columns the "
            "step needs. The columns of df and their types:", as_data(listed or "(not known)")]
        texts = _text_columns_computed_on(code, columns)
        if texts:
            hint += ["The code computes on these columns, which hold text:", as_data(", ".join(texts)),
                     "If the step needs one and it holds numbers written as text (such as '1,234' or "
                     "'1200[1000-1400]'), convert it first, for example: df['col'] = pd.to_numeric(df['col']"
                     ".astype(str).str.replace(',', '').str.extract(r'([-+]?\\d*\\.?\\d+)')[0], errors='coerce')."]
        return "\n".join(hint)
    if name in ("TypeError", "ValueError") and listed and ("str" in line or "convert" in line or "could not" in line):
        return "\n".join(["The columns of df and their types:", as_data(listed)])
    return ""


def _column_meant(key: str, columns: dict[str, str]) -> str | None:
    """The one column `key` spells otherwise: the same name but for case, `_` for a space and the spaces
    around it, else the one close match."""
    def plain(name: str) -> str:
        return " ".join(name.replace("_", " ").lower().split())

    same = [column for column in columns if plain(column) == plain(key)]
    if len(same) == 1:
        return same[0]
    close = difflib.get_close_matches(key, list(columns), n=2, cutoff=0.8)
    return close[0] if len(close) == 1 else None


def _text_columns_computed_on(code: str, columns: dict[str, str]) -> list[str]:
    """The text columns the code names, less those it only groups by."""
    grouped = " ".join(re.findall(r"groupby\(([^)]*)\)", code))
    return [column for column, dtype in columns.items()
            if dtype in TEXT_DTYPES and _quoted(column, code) and not _quoted(column, grouped)]


def _quoted(column: str, code: str) -> bool:
    return f"'{column}'" in code or f'"{column}"' in code


def _short(value: Any) -> str:
    content = value if isinstance(value, str) else repr(value)
    content = " ".join(content.split())
    return content if len(content) <= 120 else content[:117] + "…"


def _tail(content: str, size: int) -> str:
    content = content.strip()
    return content if len(content) <= size else "…" + content[-size:]
