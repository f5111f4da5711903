/**
 * `make eval`'s global setup: a fresh run (no BCC_EVAL_RESUME=1) moves an earlier run's results
 * (eval.jsonl and the notebooks) into eval-results/previous/<when>/ rather than deleting hours of work.
 */
const fs = require('fs');
const path = require('path');
const { RESULTS } = require('./paths');

module.exports = async () => {
  fs.mkdirSync(RESULTS, { recursive: true });
  if (process.env.BCC_EVAL_RESUME === '1') {
    return;
  }
  const earlier = ['eval.jsonl', 'notebooks'].filter(name =>
    fs.existsSync(path.join(RESULTS, name))
  );
  if (earlier.length === 0) {
    return;
  }
  const when = new Date().toISOString().replace(/[:.]/g, '-');
  const aside = path.join(RESULTS, 'previous', when);
  fs.mkdirSync(aside, { recursive: true });
  for (const name of earlier) {
    fs.renameSync(path.join(RESULTS, name), path.join(aside, name));
  }
  console.log(`make eval: the earlier results are in ${aside}`);
};
