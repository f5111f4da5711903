/** Where `make eval` writes: BCC_EVAL_RESULTS, by default ui-tests/eval-results/ (not in git). */
const path = require('path');

const RESULTS = path.resolve(
  process.env.BCC_EVAL_RESULTS || path.join(__dirname, '../eval-results')
);

module.exports = {
  RESULTS,
  LOG: path.join(RESULTS, 'eval.jsonl'),
  NOTEBOOKS: path.join(RESULTS, 'notebooks')
};
