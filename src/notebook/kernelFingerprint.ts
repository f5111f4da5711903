/**
 * The fingerprints of values, and the kernel's environment, for the reproducibility check
 * (docs/architecture.md#reproducibility): Python that `KERNEL_HELPERS` (kernelCode.ts) installs with
 * its own helpers (`summary`, `describe`, `is_secret`, …), whose scope it shares. A value's fingerprint
 * is its type and its summary as the variable collection makes it, plus a digest of its content where
 * one is cheap and stable: a pandas object's `hash_pandas_object`, a numeric array's bytes, a plain
 * container's canonical JSON (a set sorted, so string hashing does not matter). Bounded in time and
 * size: past them a value has no digest, and is compared by its summary alone.
 */
export const FINGERPRINT_HELPERS = String.raw`
    FINGERPRINT_BUDGET = 5.0
    DIGEST_CELLS_CAP = 20000000
    CANONICAL_NODES_CAP = 200000
    FILE_HASH_CAP = 4 * 1024 ** 3

    class NoDigest(Exception):
        pass

    def canonical(value, nodes):
        nodes[0] -= 1
        if nodes[0] < 0:
            raise NoDigest()
        value = plain(value)
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else repr(value)
        if is_record(value):
            value = dict(zip(type(value)._fields, value))
        if isinstance(value, (list, tuple)):
            return [canonical(item, nodes) for item in value]
        if isinstance(value, dict):
            return sorted([json.dumps(canonical(k, nodes)), canonical(v, nodes)] for k, v in value.items())
        if isinstance(value, (set, frozenset)):
            return sorted(json.dumps(canonical(item, nodes)) for item in value)
        raise NoDigest()

    def digest_of(value):
        import hashlib
        h = hashlib.sha256()
        if is_pandas(value, 'DataFrame') or is_pandas(value, 'Series'):
            if value.size > DIGEST_CELLS_CAP:
                return None
            pd = sys.modules['pandas']
            h.update(repr(value.shape).encode())
            if is_pandas(value, 'DataFrame'):
                h.update(json.dumps([[str(c), str(t)] for c, t in value.dtypes.items()]).encode())
            else:
                h.update(json.dumps([str(value.name), str(value.dtype)]).encode())
            h.update(json.dumps([str(n) for n in value.index.names]).encode())
            h.update(pd.util.hash_pandas_object(value, index=True).values.tobytes())
            return h.hexdigest()[:32]
        if numpy_type(value, 'ndarray'):
            if value.size > DIGEST_CELLS_CAP or value.dtype.hasobject:
                return None
            np = sys.modules['numpy']
            h.update(('%s %r' % (value.dtype, value.shape)).encode())
            h.update(np.ascontiguousarray(value).tobytes())
            return h.hexdigest()[:32]
        if isinstance(value, (str, list, tuple, dict, set, frozenset)) or is_record(value):
            h.update(json.dumps(canonical(value, [CANONICAL_NODES_CAP])).encode())
            return h.hexdigest()[:32]
        return None

    def fingerprint(value, late):
        result = {'type': None, 'summary': None, 'digest': None}
        try:
            result['type'] = describe(value)
        except Exception:
            result['type'] = type_name(value)
        try:
            result['summary'] = summary(value, 0, [NODE_BUDGET])
        except Exception:
            result['summary'] = '<%s>' % type_name(value)
        if not late:
            try:
                result['digest'] = digest_of(value)
            except Exception:
                result['digest'] = None
        return result

    def fingerprint_values(names_text, patterns_text='[]'):
        use_redaction(patterns_text)
        ns, _ = user_namespace()
        out = {}
        deadline = time.monotonic() + FINGERPRINT_BUDGET
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for name in json.loads(names_text):
                if isinstance(name, str) and name in ns:
                    item = fingerprint(ns[name], time.monotonic() > deadline)
                    if is_secret(name):
                        item['summary'] = REDACTED
                    out[name] = item
        return Reply(out)

    def file_sha256(path):
        import hashlib
        import os
        try:
            size = os.path.getsize(path)
            if size > FILE_HASH_CAP:
                return {'path': path, 'size': size, 'sha256': None, 'error': 'too big to hash'}
            h = hashlib.sha256()
            with open(path, 'rb') as handle:
                for block in iter(lambda: handle.read(1024 * 1024), b''):
                    h.update(block)
            return {'path': path, 'size': size, 'sha256': h.hexdigest()}
        except Exception as error:
            return {'path': path, 'sha256': None, 'error': '%s: %s' % (type_name(error), clip(str(error), REPR_CAP))}

    def environment(paths_text):
        import platform
        packages = {}
        for name in ('pandas', 'numpy', 'matplotlib'):
            module = sys.modules.get(name)
            version = getattr(module, '__version__', None) if module is not None else None
            if isinstance(version, str):
                packages[name] = version
        return Reply({
            'python': platform.python_version(),
            'packages': packages,
            'data_files': [file_sha256(p) for p in json.loads(paths_text) if isinstance(p, str)],
        })
`;

/** The `user_expressions` expression that fingerprints the values of `names`. */
export function fingerprintExpression(
  names: readonly string[],
  redacted: readonly string[] = []
): string {
  // A JSON string literal is also a valid Python string literal.
  return `__bcc_fingerprint_values(${JSON.stringify(JSON.stringify(names))}, ${JSON.stringify(JSON.stringify(redacted))})`;
}

/** The `user_expressions` expression that describes the kernel: Python, packages, the data files' hashes. */
export function environmentExpression(dataFiles: readonly string[]): string {
  return `__bcc_environment(${JSON.stringify(JSON.stringify(dataFiles))})`;
}
