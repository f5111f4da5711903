/**
 * A Python process standing in for the notebook's kernel: cells run in one shared namespace and
 * each returns what it printed (or its traceback). Needs pandas (`$PYTHON`, else `python3`).
 */
import { ChildProcessWithoutNullStreams, spawn } from 'child_process';
import { join } from 'path';

const RUNNER = `
import contextlib, io, json, sys, traceback
namespace = {"__name__": "__main__"}
for line in sys.stdin:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(json.loads(line), "<cell>", "exec"), namespace)
    except Exception:
        out.write(traceback.format_exc())
    sys.stdout.write(json.dumps(out.getvalue()) + "\\n")
    sys.stdout.flush()
`;

/** The demo folder: the doubles' generated code reads `data/sales.csv` from there. */
export const DEMO_DIR = join(__dirname, '..', '..', '..', '..', 'demo');

export class PythonCells {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private waiting: Array<(output: string) => void> = [];
  private stderr = '';

  constructor(cwd = DEMO_DIR) {
    this.child = spawn(process.env.PYTHON ?? 'python3', ['-u', '-c', RUNNER], {
      cwd
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => {
      this.buffer += text;
      let end = this.buffer.indexOf('\n');
      while (end >= 0) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 1);
        this.waiting.shift()?.(JSON.parse(line) as string);
        end = this.buffer.indexOf('\n');
      }
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
  }

  /** Runs one cell; resolves with its printed output. */
  run(code: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`python did not answer: ${this.stderr}`)),
        20000
      );
      this.waiting.push(output => {
        clearTimeout(timer);
        resolve(output);
      });
      this.child.stdin.write(JSON.stringify(code) + '\n');
    });
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}
