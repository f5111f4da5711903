/**
 * The one helper library of the UI tests, by concept in `support/`: the test fixture and settings
 * (`fixture.ts`), notebooks and runs as a user drives them (`notebook.ts`), planners of a test's own
 * (`planners.ts`), the probe in the page that reads a notebook's runner and cells (`probe.ts`), and
 * what a run left in the notebook file (`saved.ts`).
 */
export * from './support/fixture';
export * from './support/notebook';
export * from './support/planners';
export * from './support/probe';
export * from './support/saved';
