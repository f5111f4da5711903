/**
 * The reproducibility check in plain words, for the panel (docs/using.md#does-the-run-reproduce):
 * "Reproduced: 5 of 5 values", or what differs and where the first difference appears.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type {
  IFirstDifference,
  IReproducibilityRecord
} from '../notebook/reproducibility';
import type { ReproducibilityState } from '../tokens';

export interface IReproducibilityText {
  status: 'checking' | 'reproduced' | 'differs' | 'failed';
  headline: string;
  /** Where the first difference appears, with the cell to show; null without one. */
  firstDifference: { text: string; cellId: string } | null;
  /** Each value that differs or is missing, in words. */
  values: { name: string; text: string }[];
  /** What the check ran with: kernel, Python, packages, data files, when, against what. */
  details: string[];
}

function differences(
  record: IReproducibilityRecord,
  trans: TranslationBundle
): IReproducibilityText['values'] {
  return record.values
    .filter(value => value.status !== 'same')
    .map(value => ({
      name: value.name,
      text:
        value.status === 'missing'
          ? trans.__(
              '`%1` is missing in the fresh kernel (the run had %2)',
              value.name,
              value.reference
            )
          : trans.__(
              '`%1` differs: %2 in the fresh kernel, %3 in the run',
              value.name,
              value.fresh ?? '',
              value.reference
            )
    }));
}

function details(
  record: IReproducibilityRecord,
  trans: TranslationBundle
): string[] {
  const lines = [
    trans.__(
      'Fresh kernel: %1 (%2)',
      record.kernel.display_name ?? record.kernel.name,
      record.kernel.name
    ),
    trans.__(
      'Cells run: %1 of %2, in %3 s',
      record.cells_run,
      record.cells_total,
      Math.round(record.duration_ms / 1000)
    )
  ];
  const packages = Object.entries(record.packages)
    .map(([name, version]) => `${name} ${version}`)
    .join(', ');
  if (record.python) {
    lines.push(
      packages
        ? trans.__('Python %1; %2', record.python, packages)
        : trans.__('Python %1', record.python)
    );
  }
  for (const file of record.data_files) {
    lines.push(
      file.sha256
        ? trans.__('Data file %1: sha256 %2', file.path, file.sha256)
        : trans.__('Data file %1: not hashed (%2)', file.path, file.error ?? '')
    );
  }
  lines.push(
    record.reference === 'end_of_run'
      ? trans.__(
          'Compared with the run’s kernel at the end of the run; checked %1',
          new Date(record.checked_at).toLocaleString()
        )
      : trans.__(
          'Compared with the notebook’s kernel as it was at the check (the values of the end of the run were not kept); checked %1',
          new Date(record.checked_at).toLocaleString()
        )
  );
  return lines;
}

function firstDifferenceText(
  first: IFirstDifference,
  trans: TranslationBundle
): string {
  switch (first.kind) {
    case 'error':
      return trans.__(
        'First difference at cell %1 (%2): it raised %3',
        first.cell_index,
        first.source,
        first.error ?? ''
      );
    case 'timeout':
      return trans.__(
        'First difference at cell %1 (%2): it did not finish within %3 s',
        first.cell_index,
        first.source,
        first.seconds ?? 0
      );
    default:
      return trans.__(
        'First difference at cell %1 (%2): after it, `%3` differs from the run',
        first.cell_index,
        first.source,
        first.name ?? ''
      );
  }
}

export function reproducibilityText(
  state: ReproducibilityState,
  trans: TranslationBundle
): IReproducibilityText {
  const empty = { firstDifference: null, values: [], details: [] };
  switch (state.kind) {
    case 'checking':
      return {
        ...empty,
        status: 'checking',
        headline:
          state.phase === 'running'
            ? trans.__(
                'Checking in a fresh kernel: cell %1 of %2…',
                state.cell,
                state.cells
              )
            : state.phase === 'starting'
              ? trans.__('Checking: starting a fresh kernel…')
              : trans.__('Checking: comparing the values…')
      };
    case 'failed':
      return {
        ...empty,
        status: 'failed',
        headline: state.stopped
          ? trans.__('The reproducibility check was stopped.')
          : trans.__(
              'The reproducibility check could not run: %1',
              state.message
            )
      };
    case 'done': {
      const { record } = state;
      const first = record.first_difference;
      const headline = record.reproduced
        ? trans.__(
            'Reproduced: %1 of %2 values',
            record.matched,
            record.compared
          )
        : record.compared === 0 && !first
          ? trans.__(
              'Nothing to compare: the run’s kernel holds none of the values the run delivered.'
            )
          : trans.__(
              'Not reproduced: %1 of %2 values the same',
              record.matched,
              record.compared
            );
      return {
        status: record.reproduced ? 'reproduced' : 'differs',
        headline,
        firstDifference: first
          ? { cellId: first.cell_id, text: firstDifferenceText(first, trans) }
          : null,
        values: differences(record, trans),
        details: details(record, trans)
      };
    }
  }
}
