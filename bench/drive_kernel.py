"""What bench/llm_planner_drive.py runs in the kernel (the variable summaries and the output checks of
CONTRACTS.md §4, as the extension runs them), the sales questions of `make eval` with their answers computed
here with pandas, and DABench's scoring of `@name[value]` answers."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

VARIABLES_CODE = r'''
def _bcc_variables():
    import math, types
    out = {}
    for name, value in list(get_ipython().user_ns.items()):
        if name.startswith('_') or name in ('In', 'Out', 'exit', 'quit', 'get_ipython'):
            continue
        if isinstance(value, (types.ModuleType, type)) or callable(value):
            continue
        kind = type(value).__name__
        if value is None or isinstance(value, bool):
            out[name] = value
        elif isinstance(value, (int, float)):
            out[name] = value if not isinstance(value, float) or math.isfinite(value) else repr(value)
        elif isinstance(value, str):
            out[name] = value if len(value) <= 200 else 'str(len=%d)' % len(value)
        elif kind == 'DataFrame':
            out[name] = 'DataFrame(%d×%d)' % value.shape
        elif kind == 'Series':
            out[name] = 'Series(%d)' % len(value)
        elif hasattr(value, 'item') and getattr(value, 'shape', None) == ():
            out[name] = value.item()
        elif isinstance(value, (list, tuple, dict, set)):
            out[name] = '%s(len=%d)' % (kind, len(value))
        else:
            out[name] = kind
    return out
'''

CHECK_CODE = r'''
def _bcc_check(contracts_json):
    import json, math, numbers
    ns = get_ipython().user_ns
    out = {}
    def short(value):
        text = repr(value)
        return text if len(text) <= 200 else text[:199] + '…'
    for contract in json.loads(contracts_json):
        name = contract.get('name')
        kind = contract.get('kind', 'any')
        result = {'ok': False, 'kind': kind, 'type': '', 'value': None}
        out[name] = result
        if name not in ns:
            result['reason'] = '`%s` is missing' % name
            continue
        value = ns[name]
        type_name = type(value).__name__
        try:
            if type_name == 'DataFrame':
                result['type'] = 'DataFrame(%d×%d)' % value.shape
            elif type_name == 'Series':
                result['type'] = 'Series(%d)' % len(value)
            else:
                result['type'] = type_name
            scalar = isinstance(value, (str, bool, numbers.Number)) or (hasattr(value, 'item') and getattr(value, 'shape', None) == ())
            if scalar:
                result['value'] = short(value)
            elif isinstance(value, dict):
                result['value'] = json.dumps({str(k): short(value[k]) for k in contract.get('keys', []) if k in value})
            reason = None
            is_bool = isinstance(value, bool) or type_name == 'bool_'
            if kind == 'number':
                if is_bool or not isinstance(value, numbers.Number) or isinstance(value, complex):
                    reason = '`%s` is %s, a %s: not a number' % (name, short(value)[:60], type_name)
                elif not math.isfinite(float(value)):
                    reason = '`%s` is %s: not a finite number' % (name, short(value))
                elif contract.get('decimals') is not None and abs(float(value) - round(float(value), contract['decimals'])) > 1e-9:
                    reason = '`%s` is %s: not rounded to %d decimals' % (name, short(value), contract['decimals'])
            elif kind == 'integer':
                if is_bool or not isinstance(value, numbers.Number) or float(value) != int(float(value)):
                    reason = '`%s` is %s, a %s: not an integer' % (name, short(value)[:60], type_name)
            elif kind == 'label':
                column = contract.get('of_column')
                frame = ns.get(contract.get('frame', 'df'))
                if column and frame is not None and column in getattr(frame, 'columns', []):
                    values = frame[column]
                    if not scalar:
                        reason = '`%s` is a %s: not one value of %s[%r]' % (name, type_name, contract.get('frame', 'df'), column)
                    elif not (values == value).any():
                        if isinstance(value, numbers.Integral) and values.dtype == object:
                            reason = '`%s` is %s, an int: not a value of %s[%r] (a row number where a label was asked?)' % (name, short(value), contract.get('frame', 'df'), column)
                        else:
                            reason = '`%s` is %s: not a value of %s[%r]' % (name, short(value)[:60], contract.get('frame', 'df'), column)
                elif not isinstance(value, str):
                    reason = '`%s` is %s, a %s: not a label' % (name, short(value)[:60], type_name)
            elif kind == 'text':
                if not isinstance(value, str) or not value.strip():
                    reason = '`%s` is %s, a %s: not a text' % (name, short(value)[:60], type_name)
            elif kind == 'bool':
                if not is_bool:
                    reason = '`%s` is %s, a %s: not True or False' % (name, short(value)[:60], type_name)
            elif kind == 'series':
                if type_name != 'Series':
                    reason = '`%s` is a %s: not a Series' % (name, type_name)
            elif kind == 'dataframe':
                if type_name != 'DataFrame':
                    reason = '`%s` is a %s: not a DataFrame' % (name, type_name)
                else:
                    missing = [c for c in contract.get('columns', []) if c not in value.columns]
                    if missing:
                        reason = '`%s` has no columns %s' % (name, ', '.join(map(str, missing)))
            elif kind == 'dict':
                if not isinstance(value, dict):
                    reason = '`%s` is a %s: not a dict' % (name, type_name)
                else:
                    missing = [k for k in contract.get('keys', []) if k not in value]
                    if missing:
                        reason = '`%s` has no keys %s' % (name, ', '.join(map(str, missing)))
            elif kind == 'list':
                if not isinstance(value, (list, tuple)):
                    reason = '`%s` is a %s: not a list' % (name, type_name)
        except Exception as error:
            reason = '%s: %s' % (type(error).__name__, error)
        result['ok'] = reason is None
        if reason:
            result['reason'] = reason
    return out
'''


# --- the sales questions ------------------------------------------------------------------------------

REGIONS = ["North", "South", "East", "West"]
PRODUCTS = ["A", "B", "C"]


def _mulberry32(seed: int) -> Any:
    """The seeded generator of ui-tests/eval/tasks.ts, bit for bit, so the file is the same."""
    state = seed & 0xFFFFFFFF

    def next_value() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t = (t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    return next_value


def _js_round(value: float) -> float:
    return math.floor(value + 0.5)


def _js_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def sales_csv() -> str:
    draw = _mulberry32(7)
    lines = ["region,quarter,product,units,price,revenue"]
    for region in REGIONS:
        for quarter in range(1, 5):
            for product in PRODUCTS:
                units = 10 + math.floor(draw() * 90)
                price = _js_round((5 + draw() * 45) * 100) / 100
                revenue = _js_round(units * price * 100) / 100
                lines.append(f"{region},{quarter},{product},{units},{_js_number(price)},{_js_number(revenue)}")
    return "\n".join(lines) + "\n"


def sales_tasks(csv: Path) -> list[tuple[str, str, Any]]:
    """(id, question, expected): a label, or (number, tolerance). Asked as `make eval` asks them."""
    import pandas as pd

    df = pd.read_csv(csv)
    total = df.revenue.sum()
    by_region = df.groupby("region").revenue.sum()

    def ask(question: str) -> str:
        return f"{question} Use sales.csv. Store the result in a variable named answer."

    def number(value: float, tolerance: float = 1e-9) -> tuple[float, float]:
        return (float(value), tolerance)

    return [
        ("top_region", ask("Which region has the highest total revenue?"), by_region.idxmax()),
        ("bottom_region", ask("Which region has the lowest total revenue?"), by_region.idxmin()),
        ("top_units_product", ask("Which product sold the most units in total?"),
         df.groupby("product").units.sum().idxmax()),
        ("top_quarter", ask("Which quarter (a number from 1 to 4) had the highest total revenue?"),
         number(df.groupby("quarter").revenue.sum().idxmax())),
        ("row_count", ask("How many rows does the data have?"), number(len(df))),
        ("total_revenue", ask("What is the total revenue, rounded to the nearest integer?"), number(round(total), 1)),
        ("mean_price", ask("What is the mean price, rounded to 2 decimals?"), number(round(df.price.mean(), 2), 0.011)),
        ("top_region_q3", ask("Which region has the highest revenue in quarter 3?"),
         df[df.quarter == 3].groupby("region").revenue.sum().idxmax()),
        ("top_mean_price_product", ask("Which product has the highest average price?"),
         df.groupby("product").price.mean().idxmax()),
        ("distinct_products", ask("How many distinct products are there?"), number(df["product"].nunique())),
        ("north_units", ask("What is the total number of units sold in the North region?"),
         number(df[df.region == "North"].units.sum())),
        ("max_units", ask("What is the largest units value in a single row?"), number(df.units.max())),
        ("product_a_top_quarter", ask("In which quarter (a number from 1 to 4) did product A sell the most units?"),
         number(df[df["product"] == "A"].groupby("quarter").units.sum().idxmax())),
        ("median_revenue", ask("What is the median revenue, rounded to 2 decimals?"),
         number(round(df.revenue.median(), 2), 0.011)),
        ("rows_over_1000", ask("How many rows have a revenue above 1000?"), number((df.revenue > 1000).sum())),
        ("distinct_regions", ask("How many distinct regions are there?"), number(df.region.nunique())),
        ("product_b_revenue", ask("What is the total revenue of product B, rounded to the nearest integer?"),
         number(round(df[df["product"] == "B"].revenue.sum()), 1)),
        ("bottom_product", ask("Which product has the lowest total revenue?"),
         df.groupby("product").revenue.sum().idxmin()),
        ("east_share", ask("What percentage of the total revenue comes from the East region, rounded to 1 decimal?"),
         number(round(100 * by_region["East"] / total, 1), 0.051)),
        ("max_price", ask("What is the highest price in the data?"), number(df.price.max(), 0.001)),
    ]


# --- DABench's scoring --------------------------------------------------------------------------------


def score_dabench(response: str, labels: list[list[str]]) -> tuple[bool, float]:
    """As InfiAgent-DABench scores: each `@name[value]` the same string as the label, or both floats within
    1e-6; the question is right when every sub-answer is. Returns (all right, share right)."""
    found = dict(re.findall(r"@(\w+)\[(.*?)\]", response))
    right = 0
    for name, label in labels:
        got = found.get(name)
        if got is None:
            continue
        if got.strip() == label.strip():
            right += 1
            continue
        try:
            if abs(float(got) - float(label)) <= 1e-6:
                right += 1
        except ValueError:
            pass
    return right == len(labels), right / len(labels) if labels else 0.0
