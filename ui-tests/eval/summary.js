/**
 * Prints `make eval`'s table and totals from ui-tests/eval-results/eval.jsonl (one line per task) and
 * writes them to eval-results/eval.json.
 */
const fs = require('fs');
const path = require('path');

const RESULTS = path.resolve(__dirname, '../eval-results');
const lines = fs.existsSync(path.join(RESULTS, 'eval.jsonl'))
  ? fs.readFileSync(path.join(RESULTS, 'eval.jsonl'), 'utf-8').split('\n')
  : [];
const results = lines.filter(line => line.trim()).map(line => JSON.parse(line));
const correct = results.filter(r => r.correct).length;
const total = {
  tasks: results.length,
  correct,
  accuracy: results.length ? correct / results.length : 0,
  promptTokens: results.reduce((s, r) => s + r.promptTokens, 0),
  completionTokens: results.reduce((s, r) => s + r.completionTokens, 0),
  seconds: results.reduce((s, r) => s + r.seconds, 0),
  model: process.env.BCC_EVAL_MODEL || 'gemma-3-270m (local llama.cpp)'
};
const cell = (value, width) => String(value).slice(0, width).padEnd(width);
console.log(
  [
    'task                     | ok | answer               | expected             | prompt | compl. | seconds | state',
    ...results.map(r =>
      [
        cell(r.id, 24),
        cell(r.correct ? 'ok' : '--', 2),
        cell(r.answer, 20),
        cell(r.expected, 20),
        String(r.promptTokens).padStart(6),
        String(r.completionTokens).padStart(6),
        r.seconds.toFixed(0).padStart(7),
        r.state
      ].join(' | ')
    ),
    `accuracy ${correct}/${results.length} (${(100 * total.accuracy).toFixed(0)} %), ` +
      `${total.promptTokens} prompt + ${total.completionTokens} completion tokens, ` +
      `${total.seconds.toFixed(0)} s, model ${total.model}`
  ].join('\n')
);
fs.mkdirSync(RESULTS, { recursive: true });
fs.writeFileSync(
  path.join(RESULTS, 'eval.json'),
  JSON.stringify({ total, results }, null, 2)
);
