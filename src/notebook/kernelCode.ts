import { CHECK_HELPERS } from './kernelChecks';
import { FINGERPRINT_HELPERS } from './kernelFingerprint';

/**
 * Python that the driver runs silently in an IPython kernel. It installs its helpers on `builtins`
 * (so the user's namespace stays clean) whose results come back through `user_expressions`, the
 * one reply channel that works with `silent: true`. Each helper returns an object whose repr is
 * JSON text, so the expression's `text/plain` is parseable as it is.
 *
 * Cost does not depend on data size: a value's type is checked (by name and module, through
 * `sys.modules`, never importing pandas or numpy) before anything reads it, and big containers
 * are summarized by their length instead of being serialized. No user code runs for an object of
 * an unknown class (no `len()`, no `shape` property, no `repr`), so a lazy frame (Dask, Polars) is
 * never computed; rendered texts are capped in rows and characters, and a collection past its time
 * budget falls back to type names.
 */
export const KERNEL_HELPERS = String.raw`
def __bcc_install():
    import builtins
    import functools
    import inspect
    import itertools
    import json
    import math
    import re
    import reprlib
    import sys
    import time
    import types
    import warnings

    VALUE_CAP = 500
    TOTAL_CAP = 20000
    NAMES_CAP = 2000
    TEXT_CAP = 4000
    NODE_BUDGET = 200
    MAX_DEPTH = 4
    REPR_CAP = 200
    ROWS_CAP = 50
    COLS_CAP = 30
    TIME_BUDGET = 2.0
    SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range)
    SKIP = {'In', 'Out', 'exit', 'quit', 'get_ipython'}
    REDACTED = '<redacted>'
    PATTERN_CAP = 200
    # The redaction test of the current call: engine/variables.ts's, segment by segment.
    secret = [lambda name: False]

    class Reply:
        __slots__ = ('text',)

        def __init__(self, value):
            self.text = json.dumps(value)

        def __repr__(self):
            return self.text

    def name_segments(name, pattern=False):
        segments = []
        current = ''
        for i, char in enumerate(name):
            before = name[i - 1] if i else ''
            after = name[i + 1] if i + 1 < len(name) else ''
            if not (char.isalpha() or char.isdigit() or (pattern and char == '*')):
                if current and not current.isdigit():
                    segments.append(current.lower())
                current = ''
                continue
            case_change = char.isupper() and (
                before.islower() or (before.isupper() and after.islower()))
            if current and (case_change or char.isdigit() != before.isdigit()):
                if not current.isdigit():
                    segments.append(current.lower())
                current = ''
            current += char
        if current and not current.isdigit():
            segments.append(current.lower())
        return segments

    def segment_test(pattern):
        parts = pattern.split('*')

        def test(text):
            if len(parts) == 1:
                return text == parts[0]
            first, last = parts[0], parts[-1]
            if not text.startswith(first) or len(text) < len(first) + len(last):
                return False
            at = len(first)
            for middle in parts[1:-1]:
                found = text.find(middle, at)
                if found < 0:
                    return False
                at = found + len(middle)
            return len(text) - len(last) >= at and text.endswith(last)
        return test

    def pattern_test(pattern):
        tokens = name_segments(pattern[:PATTERN_CAP], True)
        tests = [None if token == '*' else segment_test(token) for token in tokens]

        def test(segments):
            t = s = resume = 0
            star = -1
            while s < len(segments):
                if t < len(tests) and tests[t] is not None and tests[t](segments[s]):
                    t += 1
                    s += 1
                elif t < len(tests) and tests[t] is None:
                    star = t
                    t += 1
                    resume = s
                elif star >= 0:
                    t = star + 1
                    resume += 1
                    s = resume
                else:
                    return False
            while t < len(tests) and tests[t] is None:
                t += 1
            return bool(tokens) and t == len(tests)
        return test

    def use_redaction(patterns_text):
        patterns = json.loads(patterns_text)
        tests = [pattern_test(p.strip()) for p in patterns if isinstance(p, str) and p.strip()]
        secret[0] = lambda name: isinstance(name, str) and bool(tests) and any(
            test(name_segments(name)) for test in tests)

    def is_secret(name):
        return secret[0](name)

    def is_record(value):
        return isinstance(value, tuple) and isinstance(getattr(type(value), '_fields', None), tuple)

    class BoundedRepr(reprlib.Repr):
        def repr_dict(self, value, level):
            shown = itertools.islice(value.items(), self.maxdict + 1)
            return reprlib.Repr.repr_dict(
                self, {k: REDACTED if is_secret(k) else v for k, v in shown}, level)

        def repr_instance(self, value, level):
            if not is_known(value):
                return '<%s>' % type_name(value)
            if isinstance(value, dict):
                return self.repr_dict(value, level)
            if is_record(value):
                fields = ', '.join(
                    '%s=%s' % (field, repr(REDACTED) if is_secret(field) else self.repr1(item, level - 1))
                    for field, item in zip(type(value)._fields, value))
                return clip('%s(%s)' % (type_name(value), fields), self.maxother)
            return clip(repr(value), self.maxother)

    bounded_repr = BoundedRepr()
    bounded_repr.maxlevel = MAX_DEPTH
    bounded_repr.maxlist = bounded_repr.maxtuple = bounded_repr.maxdict = ROWS_CAP
    bounded_repr.maxset = bounded_repr.maxfrozenset = bounded_repr.maxdeque = ROWS_CAP
    bounded_repr.maxstring = bounded_repr.maxlong = bounded_repr.maxother = TEXT_CAP

    class TooBig(Exception):
        pass

    def type_name(value):
        return type(value).__name__

    def clip(text, cap):
        return text if len(text) <= cap else text[:cap] + '…'

    def short_repr(value):
        try:
            return clip(repr(value), REPR_CAP)
        except Exception:
            return '<%s>' % type_name(value)

    def is_pandas(value, name):
        cls = type(value)
        return cls.__name__ == name and (cls.__module__ or '').startswith('pandas')

    def numpy_type(value, name):
        np = sys.modules.get('numpy')
        return np is not None and isinstance(value, getattr(np, name))

    def is_known(value):
        module = type(value).__module__ or ''
        return isinstance(value, SIZED) or module.split('.')[0] in ('pandas', 'numpy')

    def shape_of(value):
        try:
            if is_known(value):
                shape = getattr(value, 'shape', None)
            else:
                # A property (a lazy frame's shape) would run code: only a plain attribute is read.
                shape = inspect.getattr_static(value, 'shape', None)
        except Exception:
            return None
        if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
            return tuple(shape)
        return None

    def length_of(value):
        if not is_known(value):
            return None
        try:
            return len(value)
        except Exception:
            return None

    def describe(value):
        if value is None:
            return 'None'
        if isinstance(value, (bool, int, float, complex)):
            return type_name(value)
        if is_pandas(value, 'DataFrame'):
            return 'DataFrame(%d×%d)' % value.shape
        if is_pandas(value, 'Series'):
            return 'Series(%d)' % len(value)
        if numpy_type(value, 'ndarray'):
            return 'ndarray(%s) %s' % (', '.join(map(str, value.shape)), value.dtype)
        shape = shape_of(value)
        if shape is not None:
            return '%s(%s)' % (type_name(value), ', '.join(map(str, shape)))
        size = length_of(value)
        if size is not None:
            return '%s(len=%d)' % (type_name(value), size)
        return type_name(value)

    def scalar(value):
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return int(value) if value.bit_length() <= 53 else clip(str(value), REPR_CAP)
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else repr(float(value))
        raise TypeError(type_name(value))

    def summary(value, depth, budget):
        budget[0] -= 1
        if budget[0] < 0:
            raise TooBig()
        if value is None or isinstance(value, (bool, int, float)):
            return scalar(value)
        if isinstance(value, str):
            if len(value) <= VALUE_CAP:
                return str(value)
            if depth:
                raise TooBig()
            return 'str(len=%d): %s' % (len(value), short_repr(value[:REPR_CAP]))
        if numpy_type(value, 'generic') and getattr(value, 'shape', None) == ():
            try:
                return summary(value.item(), depth, budget)
            except TypeError:
                return short_repr(value)
        if is_pandas(value, 'DataFrame'):
            rows, cols = value.shape
            return 'DataFrame(%d×%d)' % (rows, cols)
        if is_pandas(value, 'Series'):
            return 'Series(%d)' % len(value)
        if numpy_type(value, 'ndarray'):
            return 'ndarray(%s) %s' % (', '.join(map(str, value.shape)), value.dtype)
        if is_record(value):
            value = dict(zip(type(value)._fields, value))
        if isinstance(value, (list, tuple, dict)):
            size = len(value)
            if depth < MAX_DEPTH and size <= NODE_BUDGET:
                try:
                    if isinstance(value, dict):
                        items = {}
                        for key, item in value.items():
                            if not (key is None or isinstance(key, (str, int, float, bool))):
                                raise TooBig()
                            items[str(key)] = (
                                REDACTED if is_secret(key) else summary(item, depth + 1, budget))
                    else:
                        items = [summary(item, depth + 1, budget) for item in value]
                    if depth or len(json.dumps(items)) <= VALUE_CAP:
                        return items
                except TooBig:
                    if depth:
                        raise
            if depth:
                raise TooBig()
            return '%s(len=%d)' % (type_name(value), size)
        shape = shape_of(value)
        if shape is not None:
            return '%s(%s)' % (type_name(value), ', '.join(map(str, shape)))
        if isinstance(value, (set, frozenset, bytes, bytearray, range)):
            return '%s(len=%d)' % (type_name(value), len(value))
        size = length_of(value)
        if size is not None:
            return '%s(len=%d)' % (type_name(value), size)
        if is_known(value):
            return short_repr(value)
        return '<%s>' % type_name(value)

    def is_user_value(name, value, hidden):
        if name.startswith('_') or name in SKIP:
            return False
        if name in hidden and hidden[name] is value:
            return False
        if isinstance(value, (types.ModuleType, type, functools.partial)):
            return False
        return not inspect.isroutine(value)

    def user_namespace():
        from IPython import get_ipython

        shell = get_ipython()
        return shell.user_ns, getattr(shell, 'user_ns_hidden', {})

    def collect_variables(patterns_text='[]'):
        use_redaction(patterns_text)
        ns, hidden = user_namespace()
        out = {}
        kinds = {}
        used = 2
        detailed = True
        deadline = time.monotonic() + TIME_BUDGET
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for name, value in list(ns.items()):
                if not is_user_value(name, value, hidden):
                    continue
                if len(kinds) < NAMES_CAP:
                    try:
                        kinds[name] = describe(value)
                    except Exception:
                        kinds[name] = type_name(value)
                if detailed and time.monotonic() > deadline:
                    detailed = False
                if detailed:
                    try:
                        item = REDACTED if is_secret(name) else summary(value, 0, [NODE_BUDGET])
                    except Exception:
                        item = '<%s>' % type_name(value)
                    size = len(json.dumps(name)) + len(json.dumps(item)) + 2
                    if used + size <= TOTAL_CAP:
                        out[name] = item
                        used += size
                        continue
                    detailed = False
                if len(out) >= NAMES_CAP:
                    break
                out[name] = type_name(value)
        return Reply({'values': out, 'types': kinds})

    def as_text(value):
        if is_pandas(value, 'DataFrame'):
            hidden = [c for c in value.columns if is_secret(c)]
            if hidden:
                value = value.assign(**{c: REDACTED for c in hidden})
            text = value.to_string(max_rows=ROWS_CAP, max_cols=COLS_CAP, max_colwidth=REPR_CAP)
        elif is_pandas(value, 'Series'):
            text = value.to_string(max_rows=ROWS_CAP)
        else:
            text = bounded_repr.repr(value)
        return text if len(text) <= TEXT_CAP else text[:TEXT_CAP] + '\n…(truncated)'

    def rows(n):
        return max(0, min(n, ROWS_CAP))

    def first(value, n):
        if not is_known(value):
            return None
        n = rows(n)
        if is_record(value):
            value = dict(zip(type(value)._fields, value))
        head = getattr(value, 'head', None)
        if callable(head):
            return as_text(head(n))
        if isinstance(value, dict):
            return as_text(dict(item for item, _ in zip(value.items(), range(n))))
        if isinstance(value, (list, tuple, str, bytes)) or numpy_type(value, 'ndarray'):
            return as_text(value[:n])
        return None

    def last(value, n):
        if not is_known(value):
            return None
        n = rows(n)
        if is_record(value):
            value = dict(zip(type(value)._fields, value))
        tail = getattr(value, 'tail', None)
        if callable(tail):
            return as_text(tail(n))
        if isinstance(value, dict):
            return as_text(dict(list(value.items())[-n:]))
        if isinstance(value, (list, tuple, str, bytes)) or numpy_type(value, 'ndarray'):
            return as_text(value[-n:] if n else value[:0])
        return None

    def apply_strategy(value, strategy):
        if strategy == 'shape_only':
            shape = shape_of(value)
            if shape is not None:
                return str(shape)
            size = length_of(value)
            return None if size is None else '(%d,)' % size
        if strategy == 'describe_only':
            if not is_known(value):
                return None
            describe_frame = getattr(value, 'describe', None)
            return as_text(describe_frame()) if callable(describe_frame) else None
        if strategy == 'head_only':
            return first(value, 5)
        match = re.fullmatch(r'last_(\d{1,18})_only', strategy)
        if match:
            return last(value, int(match.group(1)))
        raise LookupError()

    def summarize_variables(request_text, patterns_text='[]'):
        use_redaction(patterns_text)
        ns, _ = user_namespace()
        out = {}
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for name, strategy in json.loads(request_text).items():
                strategy = str(strategy)
                if name not in ns:
                    out[name] = '<%s: not available (no variable %s)>' % (strategy, name)
                    continue
                value = ns[name]
                if is_secret(name):
                    out[name] = REDACTED
                    continue
                try:
                    text = apply_strategy(value, strategy)
                except LookupError:
                    text = '<%s: not available (unknown strategy)>' % strategy
                except Exception as error:
                    text = '<%s: not available (%s: %s)>' % (
                        strategy, type_name(error), clip(str(error), REPR_CAP))
                if text is None:
                    text = '<%s: not available for %s>' % (strategy, type_name(value))
                out[name] = text
        return Reply(out)

${CHECK_HELPERS}
${FINGERPRINT_HELPERS}
    builtins.__bcc_collect_variables = collect_variables
    builtins.__bcc_summarize_variables = summarize_variables
    builtins.__bcc_check_outputs = check_outputs
    builtins.__bcc_fingerprint_values = fingerprint_values
    builtins.__bcc_environment = environment


try:
    __bcc_install()
finally:
    del __bcc_install
`;

/**
 * The `user_expressions` expression that collects every user variable's summary; the values of names
 * matching `redacted` (name patterns, engine/variables.ts), and of such keys in a container, are hidden.
 */
export function collectExpression(redacted: readonly string[] = []): string {
  // A JSON string literal is also a valid Python string literal.
  return `__bcc_collect_variables(${JSON.stringify(JSON.stringify(redacted))})`;
}

/** The `user_expressions` expression that applies summarize strategies to the names asked. */
export function summarizeExpression(
  request: Record<string, string>,
  redacted: readonly string[] = []
): string {
  return `__bcc_summarize_variables(${JSON.stringify(JSON.stringify(request))}, ${JSON.stringify(JSON.stringify(redacted))})`;
}
