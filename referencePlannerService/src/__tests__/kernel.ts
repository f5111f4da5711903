/**
 * A real IPython kernel for tests (through `jupyter_client`, so matplotlib's inline backend sends
 * images as a notebook would get them). Each cell answers its nbformat outputs and the names of the
 * user's variables afterwards. Needs `$PYTHON` (else `python3`) with ipykernel and pandas.
 */
import { ChildProcessWithoutNullStreams, spawn } from 'child_process';

const BRIDGE = `
import ast, json, sys
from jupyter_client.manager import start_new_kernel

manager, client = start_new_kernel(kernel_name="python3", cwd=sys.argv[1])
VARIABLES = "__import__('json').dumps(sorted(k for k, v in globals().items() if not k.startswith('_') and k not in ('In', 'Out', 'exit', 'quit', 'get_ipython') and type(v).__name__ not in ('module', 'function', 'type')))"
try:
    for line in sys.stdin:
        outputs = []

        def keep(message):
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
            elif kind in ("display_data", "execute_result"):
                output = {"output_type": kind, "data": content["data"], "metadata": content.get("metadata", {})}
                if kind == "execute_result":
                    output["execution_count"] = content.get("execution_count")
                outputs.append(output)
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content["ename"], "evalue": content["evalue"], "traceback": content["traceback"]})

        reply = client.execute_interactive(json.loads(line), output_hook=keep, timeout=120, user_expressions={"names": VARIABLES})
        names = reply["content"].get("user_expressions", {}).get("names", {})
        variables = json.loads(ast.literal_eval(names["data"]["text/plain"])) if names.get("status") == "ok" else []
        sys.stdout.write(json.dumps({"outputs": outputs, "variables": variables}) + "\\n")
        sys.stdout.flush()
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
`;

export interface IKernelOutput {
  output_type: string;
  [key: string]: unknown;
}

export interface IKernelCellResult {
  outputs: IKernelOutput[];
  /** The user's variable names after the cell ran. */
  variables: string[];
}

export class IPythonKernel {
  /** `python`: the Python whose kernel runs the cells (default: `$PYTHON`, else `python3`). */
  constructor(cwd: string, python?: string) {
    this._child = spawn(
      python ?? process.env.PYTHON ?? 'python3',
      ['-u', '-c', BRIDGE, cwd],
      { env: { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: '1' } }
    );
    this._child.stdout.setEncoding('utf8');
    this._child.stdout.on('data', (text: string) => {
      this._buffer += text;
      let end = this._buffer.indexOf('\n');
      while (end >= 0) {
        const line = this._buffer.slice(0, end);
        this._buffer = this._buffer.slice(end + 1);
        this._waiting.shift()?.(JSON.parse(line) as IKernelCellResult);
        end = this._buffer.indexOf('\n');
      }
    });
    this._child.stderr.on('data', (chunk: Buffer) => {
      this._stderr += chunk.toString('utf8');
    });
    this._child.on('exit', code => {
      this._exited = `the kernel bridge exited (${code}): ${this._stderr}`;
      for (const waiting of this._waiting.splice(0)) {
        waiting(null);
      }
    });
  }

  run(code: string): Promise<IKernelCellResult> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the kernel did not answer: ${this._stderr}`)),
        150_000
      );
      if (this._exited) {
        clearTimeout(timer);
        reject(new Error(this._exited));
        return;
      }
      this._waiting.push(result => {
        clearTimeout(timer);
        if (result) {
          resolve(result);
        } else {
          reject(new Error(this._exited ?? 'the kernel bridge exited'));
        }
      });
      this._child.stdin.write(JSON.stringify(code) + '\n');
    });
  }

  close(): Promise<void> {
    if (this._exited) {
      return Promise.resolve();
    }
    return new Promise(resolve => {
      this._child.once('exit', () => resolve());
      this._child.stdin.end();
    });
  }

  private readonly _child: ChildProcessWithoutNullStreams;
  private _buffer = '';
  private _stderr = '';
  private _exited: string | null = null;
  private _waiting: Array<(result: IKernelCellResult | null) => void> = [];
}
