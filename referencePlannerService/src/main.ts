/** Entry point: `jlpm reference-planner-service -- [options]` (see `cli.ts` for the options). */
import { parseCli, USAGE, UsageError } from './cli';
import { describeDouble, startDialectDouble } from './doubles/cli';
import { startPlannerServer } from './server';

async function main(): Promise<void> {
  let options;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    throw error;
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  if (options.dialect) {
    const double = await startDialectDouble(options.dialect);
    console.log(describeDouble(options.dialect, double.url));
    const close = (): void => void double.close().then(() => process.exit(0));
    process.on('SIGINT', close);
    process.on('SIGTERM', close);
    return;
  }
  const server = await startPlannerServer(options.server);
  const mode = options.server.replay
    ? `replaying ${options.server.replay.total} recorded requests`
    : 'planning';
  const faults = options.server.faults?.length
    ? `; faults: ${options.server.faults.map(f => f.name + (f.nth ? `@${f.nth}` : '')).join(', ')}`
    : '';
  console.log(
    `Notebook-BCC planner listening on ${server.url} (${mode}${faults})`
  );
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
