/**
 * The bench harness is its own TypeScript project (CommonJS, run by Node): lint it against it. Both
 * entries are given because ESLint merges this list with the root one index by index.
 */
module.exports = {
  parserOptions: {
    project: ['./tsconfig.json', '../referencePlannerService/tsconfig.json'],
    tsconfigRootDir: __dirname
  }
};
