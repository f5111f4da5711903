/**
 * What a planner's code reaches outside the notebook, flagged line by line (docs/using.md#approval):
 * it reads the environment, touches files outside the working folder, installs packages, runs shell
 * commands, starts processes, opens network connections, or runs code built at run time (or in the
 * page). A scan of the code's tokens (`pythonTokens.ts`): a comment or a string never counts as a call,
 * but a string that is a path or a URL counts as one. It flags, it does not prove: code that hides
 * what it does can get past it, which is why interactive mode shows every behavior's code. Pure.
 */
import { type PythonToken, pythonTokens } from './pythonTokens';

export type CodeRisk =
  | 'environment'
  | 'files'
  | 'install'
  | 'shell'
  | 'process'
  | 'network'
  | 'dynamic';

/** One thing a code cell reaches outside, where: `what` is the code that does it, shortened. */
export interface ICodeFlag {
  risk: CodeRisk;
  /** 1-based line in the cell. */
  line: number;
  what: string;
}

/** Dotted names and what they reach; a name flags itself and everything under it (`subprocess.run`). */
const RULES: [string, CodeRisk][] = [
  ...names(
    'environment',
    'os.environ os.environb os.getenv os.getenvb os.putenv os.unsetenv posix.environ nt.environ os.path.expandvars dotenv'
  ),
  ...names(
    'files',
    'os.path.expanduser os.chdir os.fchdir pathlib.Path.home Path.home'
  ),
  ...names('install', 'pip ensurepip conda'),
  ...names(
    'shell',
    'subprocess os.system os.popen commands plumbum pexpect asyncio.create_subprocess_shell'
  ),
  ...names(
    'process',
    'subprocess.Popen multiprocessing concurrent.futures.ProcessPoolExecutor os.fork os.forkpty os.exec* os.spawn* os.posix_spawn* os.kill os.killpg pty asyncio.create_subprocess_exec'
  ),
  ...names(
    'network',
    'socket socketserver urllib.request urllib.urlopen urllib2 urllib3 requests http.client httplib http.server httpx aiohttp ftplib smtplib poplib imaplib nntplib telnetlib xmlrpc.client websocket websockets paramiko pycurl asyncio.open_connection asyncio.start_server webbrowser tornado.httpclient'
  ),
  ...names(
    'dynamic',
    'eval exec compile __import__ builtins.eval builtins.exec builtins.compile builtins.__import__ importlib runpy ctypes cffi sys.modules'
  ),
  ...[
    'HTML',
    'Javascript',
    'IFrame',
    'Markdown',
    'SVG',
    'Image',
    'Audio',
    'Video'
  ].flatMap(name =>
    names('dynamic', `IPython.display.${name} IPython.core.display.${name}`)
  )
];

/** Builtins that flag only as bare names (`eval(…)`, not `df.eval(…)`). */
const BARE = new Set(['eval', 'exec', 'compile', '__import__']);

/** Line magics (also typed without `%`, IPython's automagic) and aliases, by what they do. */
const MAGICS: Record<string, CodeRisk> = {
  ...Object.fromEntries(
    ['pip', 'conda', 'mamba', 'micromamba', 'uv'].map(name => [name, 'install'])
  ),
  ...Object.fromEntries(
    [
      'sx',
      'system',
      'sc',
      'alias',
      'rehashx',
      'cat',
      'cp',
      'ls',
      'll',
      'lf',
      'lk',
      'lx',
      'ldir',
      'less',
      'man',
      'mkdir',
      'more',
      'mv',
      'rm',
      'rmdir',
      'clear',
      'bash',
      'sh',
      'script',
      'perl',
      'ruby',
      'pypy',
      'python2',
      'sudo'
    ].map(name => [name, 'shell'])
  ),
  env: 'environment',
  set_env: 'environment',
  cd: 'files',
  pushd: 'files',
  popd: 'files',
  bookmark: 'files',
  load: 'files',
  loadpy: 'files',
  writefile: 'files',
  file: 'files'
};
/** Magics that neither reach outside nor run other code. */
const HARMLESS_MAGICS = new Set(
  'matplotlib who whos who_ls precision pprint autoreload aimport config xmode pdb pinfo pinfo2 psearch magic lsmagic history colors doctest_mode automagic autocall quickref pwd tb reset reset_selective page pdef pdoc psource pfile'.split(
    ' '
  )
);
/** Names typed without `%` that IPython runs as magics or aliases when a word follows. */
const AUTOMAGIC = new Set(
  [...Object.keys(MAGICS), 'run', 'load_ext', 'reload_ext', 'store'].filter(
    name =>
      ![
        'bash',
        'sh',
        'script',
        'perl',
        'ruby',
        'pypy',
        'python2',
        'sudo',
        'file'
      ].includes(name)
  )
);
const PYTHON_KEYWORDS = /^(?:in|is|if|else|and|or|not|for|as)$/;

const URL =
  /^(?:https?|ftp|wss?|s3a?|gs|gcs|az|abfss?|hdfs|sftp|ssh|smb):\/\//i;
const INSTALL =
  /\b(?:pip3?|conda|mamba|micromamba|uv|poetry|apt-get|apt|yum|dnf|brew|npm|easy_install)\b[^\n]*\binstall\b/;
const SHELL_NETWORK = /\b(?:curl|wget|nc|ncat|ssh|scp|rsync|ftp|telnet)\b/;
const SHELL_ENVIRONMENT = /\b(?:env|printenv|export)\b|\$\{?[A-Za-z_]\w*/;
/** Flags kept per cell: a cell that reaches out at every line says so enough by then. */
const MAX_FLAGS = 50;

export interface ICodeRiskOptions {
  /** Paths the run was given (its data files), relative to the notebook: not flagged. */
  allowedPaths?: readonly string[];
}

/** What `code` reaches outside, in line order; empty when nothing. */
export function flagCode(
  code: string,
  options: ICodeRiskOptions = {}
): ICodeFlag[] {
  const tokens = pythonTokens(code);
  const allowed = new Set((options.allowedPaths ?? []).map(normalPath));
  const flags = new FlagList();
  const scope = new Scope();
  const strings = new Map<number, string[]>();
  let lineStart = true;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.kind === 'newline') {
      lineStart = true;
      continue;
    }
    if (token.kind === 'string') {
      strings.set(token.line, [
        ...(strings.get(token.line) ?? []),
        token.value
      ]);
    }
    const starts = lineStart;
    lineStart = false;
    switch (token.kind) {
      case 'shell':
        flagShell(flags, token.line, token.value, `!${token.value}`);
        break;
      case 'magic':
        flagMagic(flags, token.line, token.value, token.args, allowed);
        break;
      case 'cellMagic':
        flagCellMagic(flags, token, allowed);
        break;
      case 'string':
        flagString(flags, token.line, token.value, allowed);
        break;
      case 'name':
        if (starts && (token.value === 'import' || token.value === 'from')) {
          i = scope.readImport(tokens, i, flags);
        } else if (starts && automagic(tokens, i)) {
          const args = restOfLine(code, token.line, token.value);
          flagMagic(flags, token.line, token.value, args, allowed);
          i = skipLine(tokens, i);
        } else if (!isAttribute(tokens, i)) {
          i = scope.readName(tokens, i, flags);
        }
        break;
      default:
        break;
    }
  }
  // `subprocess.run([sys.executable, "-m", "pip", "install", …])`: what a command line says it does.
  for (const flag of flags.list()) {
    if (flag.risk === 'shell' || flag.risk === 'process') {
      const command = (strings.get(flag.line) ?? []).join(' ');
      flagCommand(flags, flag.line, command, flag.what, flag.risk === 'shell');
    }
  }
  return flags.list();
}

/** The words of a rule list, each with its risk. */
function names(risk: CodeRisk, list: string): [string, CodeRisk][] {
  return list.split(/\s+/).map(name => [name, risk]);
}

/** The risk of a dotted path: the most specific rule that covers it. */
export function ruleOf(path: string): CodeRisk | null {
  let best: [string, CodeRisk] | null = null;
  for (const rule of RULES) {
    const [name] = rule;
    const covers = name.endsWith('*')
      ? path.startsWith(name.slice(0, -1))
      : path === name || path.startsWith(`${name}.`);
    if (covers && (!best || name.length > best[0].length)) {
      best = rule;
    }
  }
  return best ? best[1] : null;
}

/** Names bound by the cell's imports, to read `sp.run` as `subprocess.run`. */
class Scope {
  /** `import a.b as c` and `from a import b as c`, by local name. */
  readonly aliases = new Map<string, string>([['__builtins__', 'builtins']]);
  /** `from a import *`. */
  readonly starred: string[] = [];

  /** An `import` or `from` statement from `i`; returns the index of its last token. */
  readImport(tokens: PythonToken[], i: number, flags: FlagList): number {
    const line = tokens[i].line;
    let at = i;
    let from = '';
    if (tokens[at].value === 'from') {
      const module = dotted(tokens, at + 1);
      from = module.path;
      at = module.end;
      if (tokens[at]?.value !== 'import') {
        return at - 1;
      }
    }
    at++;
    while (at < tokens.length && tokens[at].kind !== 'newline') {
      if (tokens[at].value === '*') {
        this.starred.push(from);
        flags.add(ruleOf(from) ?? null, line, `from ${from} import *`);
        at++;
        continue;
      }
      const name = dotted(tokens, at);
      if (!name.path) {
        at++;
        continue;
      }
      at = name.end;
      const full = from ? `${from}.${name.path}` : name.path;
      const renamed =
        tokens[at]?.value === 'as' && tokens[at + 1]?.kind === 'name';
      // `import a.b` binds `a`; `import a.b as c` and `from a import b` bind the whole path.
      const local = renamed
        ? tokens[at + 1].value
        : from
          ? name.path
          : name.parts[0];
      this.aliases.set(local, from || renamed ? full : local);
      at += renamed ? 2 : 0;
      flags.add(
        ruleOf(full),
        line,
        from ? `from ${from} import ${name.path}` : `import ${full}`
      );
    }
    return at - 1;
  }

  /** A dotted name (or `getattr(x, 'name')`, `get_ipython().system`) from `i`; returns its last index. */
  readName(tokens: PythonToken[], i: number, flags: FlagList): number {
    const name = dotted(tokens, i);
    const written = name.path;
    const line = tokens[i].line;
    // A bare name is a module only when this cell imports it (`socket = 3` is not `import socket`).
    const bare = name.parts.length === 1;
    const risk = !bare
      ? this._ruleOf(name.parts)
      : BARE.has(written) && !this.aliases.has(written)
        ? ruleOf(written)
        : this.aliases.has(written) || this.starred.length > 0
          ? this._ruleOf(name.parts)
          : null;
    if (risk) {
      flags.add(risk, line, written);
    } else if (written === 'getattr' && tokens[name.end]?.value === '(') {
      const target = dotted(tokens, name.end + 1);
      const attribute = tokens[target.end + 1];
      if (tokens[target.end]?.value === ',' && attribute?.kind === 'string') {
        const risky = this._ruleOf([...target.parts, attribute.value]);
        flags.add(risky, line, `getattr(${target.path}, '${attribute.value}')`);
      }
    } else if (written === 'get_ipython') {
      const method = tokens[name.end + 3];
      if (tokens[name.end + 2]?.value === '.' && method?.kind === 'name') {
        const shell = ['system', 'getoutput'].includes(method.value);
        flags.add(
          shell ? 'shell' : 'dynamic',
          line,
          `get_ipython().${method.value}`
        );
      }
    }
    return name.end - 1;
  }

  private _ruleOf(parts: string[]): CodeRisk | null {
    const [first, ...rest] = parts;
    const bound = this.aliases.get(first);
    const candidates = bound
      ? [bound]
      : [first, ...this.starred.map(module => `${module}.${first}`)];
    for (const base of candidates) {
      const risk = ruleOf([base, ...rest].join('.'));
      if (risk) {
        return risk;
      }
    }
    return null;
  }
}

/** `a.b.c` from `i`: its parts, as written, and the index after it. */
function dotted(
  tokens: PythonToken[],
  i: number
): { parts: string[]; path: string; end: number } {
  const parts: string[] = [];
  let at = i;
  while (tokens[at]?.kind === 'name') {
    parts.push(tokens[at].value);
    if (tokens[at + 1]?.value !== '.' || tokens[at + 2]?.kind !== 'name') {
      at++;
      break;
    }
    at += 2;
  }
  return { parts, path: parts.join('.'), end: at };
}

function isAttribute(tokens: PythonToken[], i: number): boolean {
  return tokens[i - 1]?.kind === 'op' && tokens[i - 1].value === '.';
}

/** A line that starts with a magic's name and a word after it: IPython runs it as the magic. */
function automagic(tokens: PythonToken[], i: number): boolean {
  const next = tokens[i + 1];
  if (
    !AUTOMAGIC.has(tokens[i].value) ||
    !next ||
    next.line !== tokens[i].line
  ) {
    return false;
  }
  if (
    tokens[i].value === 'cd' &&
    next.kind === 'op' &&
    './~'.includes(next.value)
  ) {
    return true;
  }
  return (
    (next.kind === 'name' && !PYTHON_KEYWORDS.test(next.value)) ||
    next.kind === 'string' ||
    (next.kind === 'op' && next.value === '-' && tokens[i + 2]?.kind === 'name')
  );
}

/** The text after `name` on its line (a magic's arguments). */
function restOfLine(code: string, line: number, name: string): string {
  const text = code.replace(/\r\n?/g, '\n').split('\n')[line - 1] ?? '';
  return text.slice(text.indexOf(name) + name.length).trim();
}

function skipLine(tokens: PythonToken[], i: number): number {
  let at = i;
  while (tokens[at + 1] && tokens[at + 1].kind !== 'newline') {
    at++;
  }
  return at;
}

function flagShell(
  flags: FlagList,
  line: number,
  command: string,
  what: string
): void {
  flags.add('shell', line, what);
  flagCommand(flags, line, command, what, true);
}

/** A command line that installs packages, and (run by a shell) reaches the network or the environment. */
function flagCommand(
  flags: FlagList,
  line: number,
  command: string,
  what: string,
  shell: boolean
): void {
  if (INSTALL.test(command)) {
    flags.add('install', line, what);
  }
  if (shell && SHELL_NETWORK.test(command)) {
    flags.add('network', line, what);
  }
  if (shell && SHELL_ENVIRONMENT.test(command)) {
    flags.add('environment', line, what);
  }
}

function flagMagic(
  flags: FlagList,
  line: number,
  name: string,
  args: string,
  allowed: Set<string>
): void {
  const what = `%${name}${args ? ` ${args}` : ''}`;
  const risk = MAGICS[name];
  if (risk === 'shell') {
    flagShell(flags, line, args, what);
  } else if (risk === 'files' && (name === 'load' || name === 'loadpy')) {
    flagString(flags, line, args, allowed, what);
  } else if (risk) {
    flags.add(risk, line, what);
  } else if (!HARMLESS_MAGICS.has(name)) {
    flags.add('dynamic', line, what);
  }
}

function flagCellMagic(
  flags: FlagList,
  token: Extract<PythonToken, { kind: 'cellMagic' }>,
  allowed: Set<string>
): void {
  const { value: name, args, body, line } = token;
  const what = `%%${name}${args ? ` ${args}` : ''}`;
  const risk = MAGICS[name];
  if (risk === 'shell') {
    flagShell(flags, line, `${args}\n${body}`, what);
  } else if (name === 'writefile' || name === 'file') {
    flagString(flags, line, args.replace(/^-a\s+/, ''), allowed, what);
  } else if (!HARMLESS_MAGICS.has(name)) {
    flags.add('dynamic', line, what);
  }
}

/** A string that names a place outside: a URL, the server's environment, a path outside the folder. */
function flagString(
  flags: FlagList,
  line: number,
  value: string,
  allowed: Set<string>,
  what = shorten(value)
): void {
  const text = value.trim();
  if (!text || text.includes('\n') || text.length > 4096) {
    return;
  }
  if (URL.test(text)) {
    flags.add('network', line, what);
  } else if (/^file:/i.test(text)) {
    flags.add('files', line, what);
  } else if (/^\/proc\/[^/]+\/environ\b/.test(text)) {
    flags.add('environment', line, what);
  } else if (isOutsidePath(text) && !allowed.has(normalPath(text))) {
    flags.add('files', line, what);
  }
}

/** Absolute, in a home folder, or up from the working folder (`..`). */
function isOutsidePath(text: string): boolean {
  return (
    /^\/[\w.~-]/.test(text) ||
    /^~(?:[\w.-]*)(?:[\\/]|$)/.test(text) ||
    /^[A-Za-z]:[\\/]/.test(text) ||
    /^\\\\/.test(text) ||
    text.split(/[\\/]/).includes('..')
  );
}

/** `./data/../x.csv` -> `x.csv`, `..` kept where nothing is left to go up from. */
function normalPath(path: string): string {
  const parts: string[] = [];
  for (const part of path.trim().replace(/\\/g, '/').split('/')) {
    if (part === '..' && parts.length > 0 && parts[parts.length - 1] !== '..') {
      parts.pop();
    } else if (part !== '.' && part !== '') {
      parts.push(part);
    }
  }
  return (path.startsWith('/') ? '/' : '') + parts.join('/');
}

function shorten(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

class FlagList {
  add(risk: CodeRisk | null, line: number, what: string): void {
    const key = `${risk}\u0000${line}\u0000${what}`;
    if (risk && !this._seen.has(key) && this._flags.length < MAX_FLAGS) {
      this._seen.add(key);
      this._flags.push({ risk, line, what: shorten(what) });
    }
  }

  list(): ICodeFlag[] {
    return [...this._flags].sort((a, b) => a.line - b.line);
  }

  private _flags: ICodeFlag[] = [];
  private _seen = new Set<string>();
}
