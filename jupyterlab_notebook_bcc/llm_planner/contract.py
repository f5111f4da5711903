"""The task's contract, read from the task's own words without the model: the variables it asks for (`in a
variable named answer`, `@mean_fare[value]`, 变量 `answer`), what each must be (a number rounded to two
decimals, a count, a label of a column of the data, a text, a dict with these keys), whether the question is
closed (one answer) or open, and the parts of a task that asks for several things.

The contract is sent to the extension (CONTRACTS.md §2), which checks it in the kernel; the planner makes
every plan deliver it, and the report states it from the checked values."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from typing import Any

# The dtypes of a column that holds text.
TEXT_DTYPES = ("object", "str", "string", "category")

KINDS = ("number", "integer", "label", "text", "bool", "series", "dataframe", "dict", "list", "any")
DEFAULT_NAME = "answer"
_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
_QUOTED_NAME = rf"[`'\"“‘]?({_NAME})[`'\"”’]?"
_AT_NAME = re.compile(rf"@({_NAME})\[([^\]\n]*)\]")


def _is_format_description(match: re.Match[str]) -> bool:
    """`@name[value]` itself: the answer format described, not an answer named `name`."""
    return match.group(1) == "name" and match.group(2).strip() == "value"
_NUMBER_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                 "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6}
# Words after "store … in" that are not a variable's name.
_NOT_NAMES = {
    "it", "them", "this", "that", "these", "those", "the", "a", "an", "one", "variable", "variables", "memory",
    "dict", "dictionary", "list", "dataframe", "series", "df", "place", "order", "total", "python", "kernel",
    "notebook", "file", "csv", "format", "form", "which", "what", "each", "new", "your", "its", "their",
}
# "store the result in answer.": a bare name only at the end of its clause; a quoted one anywhere.
_STORE = re.compile(
    r"\b(?:store|save|put|assign|keep|leave|place)\b[^.;\n?]{0,80}?\b(?:in|into|as|to)\s+"
    r"(?:(?:a|the)\s+)?(?:new\s+)?(?:(?:python|kernel)\s+)?(?:(?:variables?|dict(?:ionary)?|list|data ?frame|series)\s+)?"
    r"(?:(?:named|called)\s+)?"
    rf"(?:[`'\"“‘]({_NAME})[`'\"”’]|({_NAME})(?=\s*(?:[.,;:!?)]|$|\s+variable\b)))",
    re.IGNORECASE,
)
_NAMED = re.compile(r"\b(?:variables?|dict(?:ionary)?|list|data ?frame|series)\s+(?:named|called)\s+" + _QUOTED_NAME,
                    re.IGNORECASE)
_BACKTICKED_VARIABLE = re.compile(rf"\bvariables?\s+`({_NAME})`", re.IGNORECASE)
_CHINESE_NAMED = re.compile(
    r"(?:变量|存入|存到|存在|存为|保存到|保存在|保存为|赋值给|放入|放到|放在)\s*(?:变量)?\s*[`'\"“‘「]?\s*"
    rf"({_NAME})"
)
_KEYS = re.compile(r"\bkeys?\s*(?:named\s+|called\s+)?[:(]?\s*((?:[`'\"“‘][^`'\"”’]{1,40}[`'\"”’][\s,]*(?:and\s+|or\s+)?)+)",
                   re.IGNORECASE)
_QUOTED = re.compile(r"[`'\"“‘]([^`'\"”’]{1,40})[`'\"”’]")
# "a string that can either be "linear", "nonlinear", or "none"": the values a text may take, quoted.
_CHOICES = re.compile(
    r"\b(?:either(?:\s+be)?|one of|can be|could be|must be|should be)\b:?\s*"
    r"((?:[\"'“‘][^\"'”’]{1,40}[\"'”’](?:\s*,\s*or\s+|\s*,\s*|\s+or\s+)){1,11}[\"'“‘][^\"'”’]{1,40}[\"'”’])",
    re.IGNORECASE,
)
_DECIMALS = re.compile(
    r"(\d+|zero|one|two|three|four|five|six)\s+decimal(?:\s+places?|\s+points?|s)?|"
    r"decimal\s+places?\s*(?:of|:|=)?\s*(\d+)|"
    r"保留\s*(\d+|[一二两三四五六])\s*位小数",
    re.IGNORECASE,
)
_INTEGER_ROUNDING = re.compile(r"nearest\s+(?:whole\s+)?(?:integer|whole number)|取整|四舍五入到整数|整数", re.IGNORECASE)
_WHICH = re.compile(r"\b(?:which|what)\s+(?!(?:is|are|was|were|does|do|did|the|a|an)\b)([a-z_][a-z0-9_ ]{0,30}?)\b(?:\s+(?:has|had|have|is|was|were|did|does|do|sold|shows|got|with|in|of)\b|\s*\(|\?)",
                    re.IGNORECASE)
_CHINESE_WHICH = re.compile(r"(?:哪个|哪一个|哪一|哪些|哪)\s*([\u4e00-\u9fff]{1,4}?)(?:的|有|是|在|中|最|，|？|\?|$)")
# A few Chinese nouns and the English column names they usually stand for.
_CHINESE_NOUNS = {
    "地区": ("region", "area", "district"), "区域": ("region", "area"), "城市": ("city",), "产品": ("product",),
    "季度": ("quarter",), "月份": ("month",), "月": ("month",), "年份": ("year",), "年": ("year",),
    "国家": ("country",), "类别": ("category",), "品类": ("category",), "部门": ("department",),
    "客户": ("customer",), "门店": ("store", "shop"), "商店": ("store", "shop"),
}
_CLOSED_START = re.compile(
    r"^\s*(?:question\s*:\s*)?(?:which|what|how\s+many|how\s+much|who|when|where|is|are|does|do|did|was|were|"
    r"calculate|compute|find|determine|count|identify)\b|^\s*(?:哪|多少|是否|什么|计算|求)",
    re.IGNORECASE,
)
_OPEN_WORDS = re.compile(
    r"\b(?:explore|exploratory|overview|describe the data|visuali[sz]e|plot|chart|graph|histogram|trends?|insights?|"
    r"report on|analy[sz]e)\b|探索|可视化|画图|绘制|图表|趋势|洞察",
    re.IGNORECASE,
)
_ACTION_WORDS = (
    r"calculate|compute|find|determine|count|identify|plot|draw|show|create|generate|make|build|train|predict|"
    r"compare|list|estimate|test|fit|group|sort|rank|visuali[sz]e|summari[sz]e|report|give|tell|print|check|"
    r"remove|drop|fill|replace|convert|apply|perform|use|conduct|explore|analy[sz]e|what|which|how|who|when|where|is|are|does|do"
)
_PART_SPLIT = re.compile(
    rf"(?<=[.?!。？！；;])\s+|,?\s+and\s+then\s+|,?\s*then,?\s+(?=(?:{_ACTION_WORDS})\b)|"
    rf",?\s+and\s+(?=(?:{_ACTION_WORDS})\b)|[，,]?\s*(?:然后|并且|并|同时)\s*",
    re.IGNORECASE,
)
_PART_REQUEST = re.compile(rf"^(?:please\s+|also\s+|finally,?\s+)?(?:{_ACTION_WORDS})\b|\?$|？$|^[^a-zA-Z]*[\u4e00-\u9fff]",
                           re.IGNORECASE)


def is_chinese(content: str) -> bool:
    """A text written in Chinese: its CJK characters outnumber a tenth of its letters."""
    cjk = sum(1 for ch in content if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf")
    letters = sum(1 for ch in content if ch.isalpha())
    return cjk > 0 and cjk * 10 >= letters


@dataclass(frozen=True)
class Deliverable:
    """One variable the task (or a step) must leave in the kernel: CONTRACTS.md §1."""

    name: str
    kind: str = "any"
    of_column: str = ""
    frame: str = "df"
    index: str = ""
    columns: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    decimals: int | None = None
    describe: str = ""
    # The values a text or label may take, as the task spells them.
    choices: tuple[str, ...] = ()

    def public(self) -> dict[str, Any]:
        shape: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.of_column:
            shape["of_column"] = self.of_column
            shape["frame"] = self.frame
        if self.index:
            shape["index"] = self.index
            shape["frame"] = self.frame
        if self.columns:
            shape["columns"] = list(self.columns)
        if self.keys:
            shape["keys"] = list(self.keys)
        if self.decimals is not None:
            shape["decimals"] = self.decimals
        if self.choices:
            shape["one_of"] = list(self.choices)
        if self.describe:
            shape["describe"] = self.describe
        return shape

    def wording(self, chinese: bool = False) -> str:
        """What the variable must be, for a prompt (English) or the panel (the task's language)."""
        return self.describe or describe(self, chinese)


@dataclass(frozen=True)
class TaskContract:
    deliverables: tuple[Deliverable, ...] = ()
    answer_format: str = ""
    closed: bool = False
    chinese: bool = False
    # The things an open task asks for, one sentence each, when it asks for more than one.
    parts: tuple[str, ...] = ()
    # The deliverable was not named by the task: the planner chose `answer` for a closed question.
    implicit: bool = False

    def names(self) -> list[str]:
        return [d.name for d in self.deliverables]

    def get(self, name: str) -> Deliverable | None:
        return next((d for d in self.deliverables if d.name == name), None)

    def summary(self) -> str:
        if not self.deliverables:
            return ""
        if self.chinese:
            return "交付：" + "；".join(f"`{d.name}`" + (f"，{d.wording(True)}" if d.wording(True) else "")
                                      for d in self.deliverables)
        return "Deliver: " + "; ".join(f"`{d.name}`" + (f", {d.wording()}" if d.wording() else "")
                                       for d in self.deliverables)

    def public(self) -> dict[str, Any]:
        """`context_update.contract` (CONTRACTS.md §2)."""
        shape: dict[str, Any] = {
            "deliverables": [d.public() for d in self.deliverables],
            "summary": self.summary(),
        }
        if self.answer_format:
            shape["answer_format"] = self.answer_format
        return shape


def describe(item: Deliverable, chinese: bool = False) -> str:
    """Words for a deliverable's kind: "a number rounded to 2 decimals", "a region name"."""
    if item.choices:
        listed = ", ".join(f'"{choice}"' for choice in item.choices)
        return f"取值之一：{listed}" if chinese else f"one of {listed}"
    if chinese:
        if item.kind == "label":
            return f"{item.of_column} 列中的一个值" if item.of_column else "一个标签"
        if item.kind == "number":
            return f"一个数，保留 {item.decimals} 位小数" if item.decimals is not None else "一个数"
        return {"integer": "一个整数", "text": "一段文字", "bool": "是或否", "series": "一个 Series",
                "dataframe": "一个 DataFrame", "dict": "一个字典", "list": "一个列表"}.get(item.kind, "")
    if item.kind == "label":
        return f"a {item.of_column} name (a value of {item.frame}['{item.of_column}'])" if item.of_column else "a label"
    if item.kind == "number":
        return f"a number rounded to {item.decimals} decimals" if item.decimals is not None else "a number"
    if item.kind == "dict" and item.keys:
        return f"a dict with the keys {', '.join(item.keys)}"
    return {"integer": "an integer", "text": "a text", "bool": "True or False", "series": "a pandas Series",
            "dataframe": "a pandas DataFrame", "dict": "a dict", "list": "a list"}.get(item.kind, "")


def checked(item: Deliverable, chinese: bool = False) -> str:
    """What the check in the kernel holds a value to, in words ("a value of df['region']"): its kind and
    form, said after "checked in the kernel" so that a value that passed reads as checked, not as right."""
    if item.kind == "label" and item.of_column and not item.choices:
        where = f"{item.frame}['{item.of_column}']"
        return f"{where} 中的一个值" if chinese else f"a value of {where}"
    if item.kind == "series" and item.index:
        return f"以 {item.index} 为索引的 Series" if chinese else f"a Series indexed by {item.index}"
    if item.kind == "dataframe" and item.columns:
        listed = ", ".join(item.columns)
        return f"含有列 {listed} 的 DataFrame" if chinese else f"a DataFrame with the columns {listed}"
    if item.kind == "dict" and item.keys:
        listed = ", ".join(item.keys)
        return f"含有键 {listed} 的字典" if chinese else f"a dict with the keys {listed}"
    return describe(item, chinese) or ("存在" if chinese else "it exists")


def read_columns(preview: str) -> dict[str, str]:
    """The data's columns and their dtypes, from the load step's preview ("Columns and types:" lines)."""
    columns: dict[str, str] = {}
    inside = False
    for line in preview.splitlines():
        stripped = line.strip()
        if stripped.startswith("Columns and types"):
            inside = True
            continue
        if not inside:
            continue
        if not stripped or stripped.startswith("First rows") or stripped.endswith(":"):
            break
        name, _, dtype = stripped.rpartition(" ")
        if name.strip() and dtype:
            columns[name.strip()] = dtype
    return columns


def extract(task: str, columns: dict[str, str] | None = None) -> TaskContract:
    """The contract the task states. Deterministic: the same task and columns give the same contract."""
    chinese = is_chinese(task)
    known = columns or {}
    answer_format = "@name[value]" if _AT_NAME.search(task) else ""
    deliverables = _formatted(task, known) if answer_format else _named(task, known)
    closed = bool(deliverables) or _closed(task)
    implicit = False
    if closed and not deliverables:
        deliverables = [_deliverable(DEFAULT_NAME, question_part(task), task, known, chinese)]
        implicit = True
    parts = () if deliverables and not implicit else _parts(task)
    return TaskContract(tuple(deliverables), answer_format, closed, chinese, parts, implicit)


def with_columns(contract: TaskContract, task: str, columns: dict[str, str]) -> TaskContract:
    """The contract again once the data's columns are known (a label of which column)."""
    again = extract(task, columns)
    return again if again.deliverables or not contract.deliverables else contract


# --- the deliverables --------------------------------------------------------------------------------


def _valid(name: str) -> bool:
    return bool(re.fullmatch(_NAME, name)) and not keyword.iskeyword(name) and name.lower() not in _NOT_NAMES


def _formatted(task: str, columns: dict[str, str]) -> list[Deliverable]:
    """`@name[placeholder]` deliverables, each described by the words about its placeholder."""
    found: list[Deliverable] = []
    matches = [m for m in _AT_NAME.finditer(task) if not _is_format_description(m)]
    single = len({m.group(1) for m in matches}) == 1
    for index, match in enumerate(matches):
        name = match.group(1)
        if not _valid(name) or any(d.name == name for d in found):
            continue
        end = matches[index + 1].start() if index + 1 < len(matches) else len(task)
        placeholder = match.group(2).strip()
        segment = _placeholder_words(task, placeholder)
        if re.search(r"/|\bor\b", placeholder):
            # `@significance[significant/no significant]`: the choices themselves; quoted, the values it may take.
            segment = f"a string, {placeholder}" if _QUOTED.search(placeholder) else "a string"
        elif "," in placeholder and all(re.fullmatch(rf"\s*(?:{_NAME}|\d+|\.\.\.|…|etc\.?)?\s*", part)
                                        for part in placeholder.split(",")):
            # `@counts[count_0, count_1]`: several values in one answer, in whatever form.
            found.append(Deliverable(name=name))
            continue
        elif " " in placeholder:
            # `@mean_ratio[Mean of the ratio column, rounded to two decimal places]`: the brackets describe it.
            segment = f"{placeholder}. {segment}" if segment else placeholder
        elif not segment:
            segment = task[match.start():end]
        # Several deliverables: what the format says after them all ("where … are numbers") describes each.
        context = task if single else task[matches[-1].end():]
        found.append(_deliverable(name, segment, context, columns, is_chinese(task)))
    return found


def _placeholder_words(task: str, placeholder: str) -> str:
    """`where "r_value" is a number …, rounded to two decimal places`: the clause that describes it."""
    if not re.fullmatch(_NAME, placeholder):
        return ""
    quote = r"[\"'“‘`]?"
    close = r"[\"'”’`]?"
    others = rf"(?:\s*(?:,\s*and|,|and)\s*{quote}{_NAME}{close})*"
    pattern = re.compile(
        rf"(?<![\w@\[]){quote}{re.escape(placeholder)}{close}{others}\s+(?:is|are|should|must|will|:)\b"
        rf"((?:[^.;]|\.(?=\d))*?)(?=[.;](?!\d)|,?\s*(?:and\s+)?[\"'“‘`]{_NAME}[\"'”’`]\s+(?:is|are)\b|$)",
        re.IGNORECASE,
    )
    match = pattern.search(task)
    return match.group(1).strip() if match else ""


# Each kind and the words that ask for it; the word that comes first in a description wins.
_KIND_WORDS: tuple[tuple[str, str], ...] = (
    ("dict", r"\bdict(?:ionary)?\b|字典"),
    ("list", r"\ba list\b|\blist of\b|comma[- ]separated|列表"),
    ("bool", r"\bboolean\b|\btrue or false\b|布尔"),
    ("dataframe", r"\bdata ?frame\b"),
    ("series", r"\bseries\b"),
    ("text", r"\bstring\b|\btext\b|\bword\b|[\"']yes[\"']|\byes\b or \bno\b|文字|字符串"),
    ("integer", r"\binteger\b|\bwhole number\b|\bhow many\b|\bcount of\b|\bnumber of\b|多少个|几个|个数|数量"),
    ("number", (r"\bfloat|\bnumber\b|\bdecimal|\brounded\b|\bmean\b|\baverage\b|\bmedian\b|\bsum\b|\btotal\b|"
               r"\bcorrelation\b|\bcoefficient\b|\bratio\b|\bpercent(?:age)?\b|\bproportion\b|\brate\b|"
               r"\bdeviation\b|\bvariance\b|\bskewness\b|\bkurtosis\b|\bp-?value\b|\bhow much\b|\bscore\b|"
               r"\blargest\b|\bsmallest\b|\bmaximum\b|\bminimum\b|\bhighest value\b|\blowest value\b|"
               r"平均|均值|中位数|总和|总计|比例|比率|相关|标准差|方差|多少")),
)


def _kind_of(words: str) -> str:
    first, kind = len(words) + 1, "any"
    for name, pattern in _KIND_WORDS:
        match = re.search(pattern, words, re.IGNORECASE)
        if match and match.start() < first:
            first, kind = match.start(), name
    return kind


def _named(task: str, columns: dict[str, str]) -> list[Deliverable]:
    names: list[str] = []
    for pattern in (_NAMED, _BACKTICKED_VARIABLE, _STORE, _CHINESE_NAMED):
        for match in pattern.finditer(task):
            name = next(group for group in match.groups() if group)
            if _valid(name) and name not in names:
                names.append(name)
    # "variables named `mean` and `median`": every name of that phrase.
    for match in re.finditer(rf"\bvariables\s+(?:named|called)\s+((?:[`'\"]?{_NAME}[`'\"]?(?:\s*,\s*|\s+and\s+)?)+)",
                             task, re.IGNORECASE):
        for name in re.findall(_NAME, match.group(1)):
            if name != "and" and _valid(name) and name not in names:
                names.append(name)
    chinese = is_chinese(task)
    return [_deliverable(name, _sentence_of(task, name), task, columns, chinese) for name in names[:8]]


def _sentence_of(task: str, name: str) -> str:
    """The task's words about `name`: the question, and the sentence that names it."""
    sentences = [s for s in re.split(r"(?<=[.?!。？！])\s*", task) if s.strip()]
    question = next((s for s in sentences if s.rstrip().endswith(("?", "？"))), sentences[0] if sentences else "")
    for sentence in sentences:
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", sentence):
            return question if sentence == question else f"{question} {sentence}"
    return task


def _deliverable(name: str, segment: str, context: str, columns: dict[str, str], chinese: bool) -> Deliverable:
    """What `segment` (the task's words about `name`) asks `name` to be; `context` adds what it leaves out."""
    keys = _keys(segment)
    decimals = _decimals(segment)
    if decimals is None:
        found = {d for d in (_decimals(m.group(0)) for m in _DECIMALS.finditer(context)) if d is not None}
        decimals = found.pop() if len(found) == 1 else None
    of_column = _which_column(segment, columns) or _which_column(context, columns)
    kind = "dict" if keys else _kind_of(segment)
    if kind == "any":
        kind = _kind_of(context)
    if of_column and kind in ("any", "text", "number", "integer"):
        kind = "label"
    elif kind in ("number", "integer") and decimals is None and _which_noun(segment):
        # "Which region has the highest total revenue?" asks a label, whatever the question's other words.
        kind = "any"
    if kind == "integer" and (decimals is not None or re.search(r"\bfloat|\bdecimal", segment, re.IGNORECASE)):
        kind = "number"
    if kind in ("any", "number") and decimals is None and _INTEGER_ROUNDING.search(segment):
        kind = "integer"
    if kind != "number":
        decimals = None
    choices = _choices(segment) if kind in ("text", "label", "any") else ()
    if choices and kind == "any":
        kind = "text"
    wording = _unit(segment)
    if kind == "label" and not wording:
        text_column = columns.get(of_column, "object") in TEXT_DTYPES
        wording = (f"a {of_column} name, a value of df['{of_column}']" if text_column
                   else f"a {of_column}, a value of df['{of_column}']")
        if chinese:
            wording = f"`{of_column}` 列中的一个值"
    return Deliverable(name=name, kind=kind, of_column=of_column if kind == "label" else "",
                       keys=tuple(keys) if kind == "dict" else (), decimals=decimals, describe=wording,
                       choices=choices)


def _choices(segment: str) -> tuple[str, ...]:
    """The quoted values a description says the answer can be ("either "yes" or "no""), else none."""
    match = _CHOICES.search(segment)
    if not match:
        return ()
    values = [value.strip() for value in _QUOTED.findall(match.group(1)) if value.strip()]
    return tuple(dict.fromkeys(values)) if len(values) >= 2 else ()


def _keys(segment: str) -> list[str]:
    match = _KEYS.search(segment)
    if not match:
        return []
    return [key.strip() for key in _QUOTED.findall(match.group(1)) if key.strip()][:12]


def _decimals(segment: str) -> int | None:
    match = _DECIMALS.search(segment)
    if not match:
        return None
    word = next(group for group in match.groups() if group)
    return int(word) if word.isdigit() else _NUMBER_WORDS.get(word.lower())


def _which_noun(segment: str) -> str:
    match = _WHICH.search(segment)
    if match:
        return match.group(1).strip().lower()
    chinese = _CHINESE_WHICH.search(segment)
    return chinese.group(1) if chinese else ""


def _which_column(segment: str, columns: dict[str, str]) -> str:
    """The column a "which region…" question asks a value of, when the data has it."""
    noun = _which_noun(segment)
    if not noun or not columns:
        return ""
    by_lower = {name.lower(): name for name in columns}
    candidates = [noun, noun.rstrip("s"), noun.replace(" ", "_"), *_CHINESE_NOUNS.get(noun, ())]
    last = noun.split()[-1] if noun.split() else noun
    candidates += [last, last.rstrip("s")]
    for candidate in candidates:
        if candidate.lower() in by_lower:
            return by_lower[candidate.lower()]
    return ""


def _unit(segment: str) -> str:
    match = re.search(r"\b(?:in|as an?)\s+(percent(?:age)?|thousands|millions|dollars|euros|days|hours|minutes|seconds)\b",
                      segment, re.IGNORECASE)
    return f"in {match.group(1).lower()}" if match else ""


# --- closed or open, and the parts of a task ---------------------------------------------------------


def question_part(task: str) -> str:
    """The question itself: the task's first paragraph (a benchmark adds its constraints after it)."""
    first = re.split(r"\n\s*\n|\n(?=\s*(?:constraints?|format|requirements?)\s*:)", task.strip(), maxsplit=1)[0]
    return re.sub(r"^\s*question\s*:\s*", "", first.split("\n")[0] if "\n" in first and
                  re.match(r"^\s*question\s*:", first, re.IGNORECASE) else first, flags=re.IGNORECASE).strip()


def _closed(task: str) -> bool:
    question = question_part(task)
    if not question or _OPEN_WORDS.search(question):
        return False
    asks = question.count("?") + question.count("？")
    return asks <= 1 and bool(_CLOSED_START.search(question)) and len(_parts(task)) <= 1


def _parts(task: str) -> tuple[str, ...]:
    question = question_part(task)
    pieces = [p.strip(" ,;，；") for p in _PART_SPLIT.split(question) if p and p.strip(" ,;，；")]
    requests = [p for p in pieces if _PART_REQUEST.search(p) and len(p) > 3]
    return tuple(requests[:4]) if len(requests) > 1 else ()


@dataclass
class Coverage:
    """Which parts of the task a plan's steps cover, by their words."""

    covered: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


_STOP = frozenset(
    ["the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "with", "by", "from", "at", "as", "is", "are", "was", "were", "be", "this", "that", "these", "those", "it", "its", "each", "per", "all", "any", "data", "dataset", "column", "columns", "value", "values", "using", "use", "calculate", "compute", "find", "determine", "identify", "create", "generate", "make", "show", "which", "what", "how", "many", "much", "who", "when", "where", "does", "do", "did", "please", "also", "then", "there", "their", "them", "into", "than", "more", "most", "less", "least", "between", "over", "under", "after", "before", "new", "get", "give", "tell", "print"]
)


def _content_words(content: str) -> set[str]:
    found = {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z][A-Za-z0-9_]{2,}", content)}
    cjk = re.findall(r"[\u4e00-\u9fff]", content)
    found |= {a + b for a, b in zip(cjk, cjk[1:])}
    return {w for w in found if w and w not in _STOP}


_CHART = re.compile(r"\b(?:plot|chart|graph|histogram|visuali[sz]\w*|bar|scatter|draw)\b|图", re.IGNORECASE)


def coverage(parts: tuple[str, ...], step_texts: list[str]) -> Coverage:
    """A part is covered by a step that shares half of its content words (and draws, when it asks a chart)."""
    result = Coverage()
    for part in parts:
        wanted = _content_words(part)
        chart = bool(_CHART.search(part))
        hit = False
        for step_text in step_texts:
            if chart and not _CHART.search(step_text):
                continue
            have = _content_words(step_text)
            if not wanted or len(wanted & have) * 2 >= len(wanted):
                hit = True
                break
        (result.covered if hit else result.missing).append(part)
    return result
