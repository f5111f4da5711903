/**
 * The output checks that run silently in the kernel (docs/protocol.md#output-contracts): Python that
 * `KERNEL_HELPERS` (kernelCode.ts) installs with its own helpers (`describe`, `is_secret`, `clip`, …),
 * whose scope it shares. A contract is data: what each kind checks is fixed here, no planner code runs.
 * The checks of one call share a time budget; a value is shown only when short (a scalar, a label, a
 * text, a dict's named keys) and never for a name the redaction patterns hide.
 */
export const CHECK_HELPERS = String.raw`
    CHECK_BUDGET = 2.0
    CHECK_VALUE_CAP = 200
    DICT_ENTRY_CAP = 60
    DICT_KEYS_CAP = 20
    DECIMALS_TOLERANCE = 1e-9

    class CheckFailed(Exception):
        pass

    def q(name):
        # A name as the planner and the panel quote it, in backquotes.
        return chr(96) + name + chr(96)

    def article(word):
        return ('an ' if word[:1].lower() in 'aeiou' else 'a ') + word

    def plain(value):
        # A numpy scalar as the Python value it holds.
        if numpy_type(value, 'generic') and getattr(value, 'shape', None) == ():
            try:
                return value.item()
            except Exception:
                return value
        return value

    def check_type(value):
        if isinstance(value, str):
            return 'str'
        if numpy_type(value, 'generic'):
            return type_name(value)
        try:
            return describe(value)
        except Exception:
            return type_name(value)

    def is_scalar(value):
        if value is None or isinstance(value, (str, bool, int, float)):
            return True
        module = (type(value).__module__ or '').split('.')[0]
        return module in ('pandas', 'numpy') and getattr(value, 'ndim', 1) == 0

    def is_number(value):
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    def shown_value(value, keys):
        value = plain(value)
        if isinstance(value, str):
            return clip(value, CHECK_VALUE_CAP)
        if value is None or isinstance(value, (bool, int, float)):
            return clip(repr(value), CHECK_VALUE_CAP)
        if isinstance(value, dict):
            names = list(keys) if keys else [str(k) for k in itertools.islice(value, DICT_KEYS_CAP)]
            by_text = {str(k): k for k in itertools.islice(value, NODE_BUDGET)}
            entries = {}
            for name in names[:DICT_KEYS_CAP]:
                if name in by_text:
                    item = plain(value[by_text[name]])
                    text = short_repr(item) if is_scalar(item) else '<%s>' % check_type(item)
                    entries[name] = REDACTED if is_secret(name) else clip(text, DICT_ENTRY_CAP)
            return json.dumps(entries)
        if is_scalar(value):
            return clip(str(value), CHECK_VALUE_CAP)
        return None

    def column_of(contract, ns, key, name):
        frame_name = contract.get('frame') or 'df'
        column = contract.get(key)
        where = '%s[%r]' % (frame_name, column)
        frame = ns.get(frame_name)
        if not is_pandas(frame, 'DataFrame'):
            raise CheckFailed('%s could not be checked against %s: there is no DataFrame %s'
                              % (name, where, q(frame_name)))
        if column not in frame.columns:
            raise CheckFailed('%s could not be checked against %s: %s has no column %r'
                              % (name, where, q(frame_name), column))
        return frame[column], where

    def holds_text(column):
        dtype = column.dtype
        if getattr(dtype, 'name', '') == 'category':
            dtype = dtype.categories.dtype
        return getattr(dtype, 'kind', '') in 'OSU' or str(dtype).startswith('string')

    def check_label(contract, ns, name, value, said):
        scalar = plain(value)
        if not is_scalar(scalar) or scalar is None:
            raise CheckFailed('%s is %s, not a label' % (name, article(check_type(value))))
        if not contract.get('of_column'):
            if isinstance(scalar, str):
                return
            raise CheckFailed('%s is %s, not a label (a str)' % (name, said))
        column, where = column_of(contract, ns, 'of_column', name)
        if bool(column.isin([scalar]).any()):
            return
        if is_number(scalar) and holds_text(column):
            raise CheckFailed('%s is %s: not a value of %s (a row number where a label was asked?)'
                              % (name, said, where))
        raise CheckFailed('%s is %s: not a value of %s' % (name, said, where))

    def check_series(contract, ns, name, value):
        if not is_pandas(value, 'Series'):
            raise CheckFailed('%s is %s, not a Series' % (name, article(check_type(value))))
        index = contract.get('index')
        if not index or value.index.name == index or index in (value.index.names or []):
            return
        labels, where = column_of(contract, ns, 'index', name)
        if len(value) > 0 and bool(value.index.isin(labels).all()):
            return
        raise CheckFailed('%s is a Series whose index is not %s: its labels are not values of %s'
                          % (name, index, where))

    def check_frame(contract, name, value):
        if not is_pandas(value, 'DataFrame'):
            raise CheckFailed('%s is %s, not a DataFrame' % (name, article(check_type(value))))
        present = set(map(str, value.columns)) | set(str(n) for n in (value.index.names or []) if n is not None)
        lacking = [c for c in contract.get('columns') or [] if c not in present]
        if lacking:
            raise CheckFailed('%s is a DataFrame without the columns %s' % (name, lacking))

    def check_dict(contract, name, value):
        if not isinstance(value, dict):
            raise CheckFailed('%s is %s, not a dict' % (name, article(check_type(value))))
        present = set(str(k) for k in itertools.islice(value, NODE_BUDGET * 50))
        lacking = [k for k in contract.get('keys') or [] if k not in present]
        if lacking:
            raise CheckFailed('%s is a dict without the keys %s' % (name, lacking))

    def check_kind(contract, ns, name, value, said):
        kind = contract.get('kind') or 'any'
        scalar = plain(value)
        if kind == 'number':
            if not is_number(scalar):
                raise CheckFailed('%s is %s, not a number' % (name, said))
            if not math.isfinite(scalar):
                raise CheckFailed('%s is %s, not a finite number' % (name, said))
            decimals = contract.get('decimals')
            if decimals is not None and abs(scalar - round(scalar, int(decimals))) > DECIMALS_TOLERANCE:
                raise CheckFailed('%s is %s, not rounded to %d decimals' % (name, said, decimals))
        elif kind == 'integer':
            integral = isinstance(scalar, float) and math.isfinite(scalar) and scalar.is_integer()
            if not (isinstance(scalar, int) and not isinstance(scalar, bool)) and not integral:
                raise CheckFailed('%s is %s, not an integer' % (name, said))
        elif kind == 'label':
            check_label(contract, ns, name, value, said)
        elif kind == 'text':
            if not isinstance(scalar, str):
                raise CheckFailed('%s is %s, not a text' % (name, said))
            if not scalar.strip():
                raise CheckFailed('%s is an empty text' % name)
        elif kind == 'bool':
            if not isinstance(scalar, bool):
                raise CheckFailed('%s is %s, not a bool' % (name, said))
        elif kind == 'series':
            check_series(contract, ns, name, value)
        elif kind == 'dataframe':
            check_frame(contract, name, value)
        elif kind == 'dict':
            check_dict(contract, name, value)
        elif kind == 'list':
            if not isinstance(value, (list, tuple)):
                raise CheckFailed('%s is %s, not a list' % (name, article(check_type(value))))
        choices = contract.get('one_of')
        if kind in ('text', 'label', 'any') and isinstance(choices, list) and choices and scalar not in choices:
            raise CheckFailed('%s is %s, not one of: %s' % (name, said, ', '.join(repr(c) for c in choices)))

    def check_one(contract, ns, late):
        name = str(contract.get('name'))
        kind = contract.get('kind') or 'any'
        result = {'ok': False, 'kind': kind, 'type': None, 'value': None}
        if name not in ns:
            result['reason'] = '%s is missing' % q(name)
            return result
        value = ns[name]
        hidden = is_secret(name)
        try:
            result['type'] = check_type(value)
            result['value'] = None if hidden else shown_value(value, contract.get('keys'))
            if late:
                raise CheckFailed('%s was not checked: the checks took over %g s' % (q(name), CHECK_BUDGET))
            scalar = plain(value)
            if hidden or not is_scalar(scalar):
                said = article(result['type'])
            elif isinstance(scalar, str):
                said = short_repr(scalar)
            else:
                said = '%s, %s' % (short_repr(scalar), article(result['type']))
            check_kind(contract, ns, q(name), value, said)
            result['ok'] = True
        except CheckFailed as failed:
            result['reason'] = str(failed)
        except Exception as error:
            result['reason'] = 'checking %s raised %s: %s' % (
                q(name), type_name(error), clip(str(error), REPR_CAP))
        return result

    def check_outputs(contracts_text, patterns_text='[]'):
        use_redaction(patterns_text)
        ns, _ = user_namespace()
        out = {}
        deadline = time.monotonic() + CHECK_BUDGET
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for contract in json.loads(contracts_text):
                if isinstance(contract, dict) and isinstance(contract.get('name'), str):
                    out[contract['name']] = check_one(contract, ns, time.monotonic() > deadline)
        return Reply(out)
`;

/** The `user_expressions` expression that checks `contracts` (a JSON list) with the redaction `patterns`. */
export function checkExpression(
  contracts: readonly unknown[],
  redacted: readonly string[] = []
): string {
  // A JSON string literal is also a valid Python string literal.
  return `__bcc_check_outputs(${JSON.stringify(JSON.stringify(contracts))}, ${JSON.stringify(JSON.stringify(redacted))})`;
}
