/** The registry with one dialect's adapter replaced, for tests of the selector around it. */
import type { IDialect, IDialectAdapter } from '../dialect';
import { type DialectName, DIALECTS } from '../registry';

/** The registry's dialects, `name`'s adapter being `adapter` (a fake that records its calls). */
export function withAdapter(
  name: DialectName,
  adapter: IDialectAdapter
): IDialect<DialectName>[] {
  return DIALECTS.map(dialect =>
    dialect.name === name
      ? { ...dialect, createAdapter: () => () => adapter }
      : dialect
  );
}
