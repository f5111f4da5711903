/**
 * The reproducibility check of each notebook's run (docs/architecture.md#reproducibility), as a
 * service: it keeps the run's values as its kernel held them when the run ended, starts a check from
 * the panel's button or at the end of every completed run (the `checkReproducibility` setting),
 * stops it, shows it in the run's view model and records it in the notebook's metadata. The check
 * itself (`notebook/reproduce.ts`) loads with the runtime.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelSpec, Session } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IRunSettings } from '../engine/settings';
import type { IRunFinished, IRunSnapshot } from '../engine/types';
import { redactedPatterns } from '../engine/variables';
import { asObject } from '../notebook/json';
import { saveFromPage } from '../notebook/saving';
import {
  CELL_METADATA_KEY,
  RUN_STATE_METADATA_KEY
} from '../notebook/metadata';
import {
  comparedNames,
  type Fingerprints,
  type IReproducibilityRecord,
  readReproducibilityRecord,
  REPRODUCIBILITY_KEY
} from '../notebook/reproducibility';
import type {
  IRunModel,
  IRunModelRegistry,
  IRunnerEntry,
  IWorkflowRunnerRegistry,
  ReproducibilityState
} from '../tokens';
import { loadRuntime } from './lazy';

/** The values a run delivered: its deliverables, then its steps' expected and produced variables. */
export function runValueNames(snapshot: IRunSnapshot): string[] {
  const deliverables =
    snapshot.outcome?.deliverables.map(d => d.name) ??
    Object.keys(snapshot.outputChecks ?? {});
  const expected: string[] = [];
  for (const stage of snapshot.progress.template?.stages ?? []) {
    for (const step of stage.steps) {
      expected.push(...(step.expected_outputs ?? []));
    }
  }
  for (const level of [snapshot.progress.steps, snapshot.progress.stages]) {
    for (const item of level.completed) {
      expected.push(...(item.outputs_produced?.variables ?? []));
    }
  }
  return comparedNames(deliverables, expected);
}

/** The run's data files, as the run saved in the notebook names them. */
export function runDataFiles(panel: NotebookPanel): string[] {
  const saved = asObject(
    panel.model?.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)
  );
  return Array.isArray(saved.dataFiles)
    ? saved.dataFiles.filter((f): f is string => typeof f === 'string')
    : [];
}

interface IEntry {
  panel: NotebookPanel;
  /** A loop ran since the last run ended (a saved run read back as completed did not). */
  ran: boolean;
  /** The run's values when it ended (this session), with the names they are of. */
  reference: { names: string[]; values: Fingerprints } | null;
  /** The run's values being read as it ended: `reference` once this settles. */
  keeping: Promise<void> | null;
  checking: AbortController | null;
}

export class ReproducibilityChecks {
  constructor(private readonly _options: ReproducibilityChecks.IOptions) {
    const { runners, models } = _options;
    runners.runnerAdded.connect((_, entry) => this._adopt(entry), this);
    // Started with the first notebook (`keep.ts`): the notebooks open by then are adopted too.
    for (const entry of runners.entries()) {
      this._adopt(entry);
      const model = models.model(entry.panel);
      if (model) {
        this._showStored(entry.panel, model);
      }
    }
    models.modelAdded.connect(
      (_, { panel, model }) => this._showStored(panel, model),
      this
    );
  }

  /** A check is under way for this notebook. */
  isChecking(panel: NotebookPanel): boolean {
    return (this._entries.get(panel)?.checking ?? null) !== null;
  }

  /** The notebook's run can be checked: it ran (here or saved), and neither it nor a check runs now. */
  canCheck(panel: NotebookPanel): boolean {
    const model = this._options.models.model(panel);
    return (
      !!model &&
      model.source !== 'none' &&
      !model.runner.isRunning &&
      model.lockState.kind !== 'other' &&
      !this.isChecking(panel)
    );
  }

  /** Checks the notebook's run; resolves when the check ends (its state is in the run model). */
  async check(panel: NotebookPanel): Promise<void> {
    const model = this._options.models.model(panel);
    const entry = this._entries.get(panel);
    if (!model || !entry || entry.checking) {
      return;
    }
    const abort = new AbortController();
    entry.checking = abort;
    model.setReproducibility({
      kind: 'checking',
      phase: 'starting',
      cell: 0,
      cells: 0
    });
    let state: ReproducibilityState;
    try {
      const record = await this._check(panel, model, entry, abort.signal);
      state = { kind: 'done', record };
    } catch (reason) {
      state = {
        kind: 'failed',
        message: reason instanceof Error ? reason.message : String(reason),
        stopped:
          typeof reason === 'object' &&
          reason !== null &&
          (reason as { kind?: unknown }).kind === 'stopped'
      };
    }
    entry.checking = null;
    model.setReproducibility(state);
  }

  private async _check(
    panel: NotebookPanel,
    model: IRunModel,
    entry: IEntry,
    signal: AbortSignal
  ): Promise<IReproducibilityRecord> {
    const { trans } = this._options;
    const runtime = await loadRuntime();
    const shared = panel.model?.sharedModel;
    if (!shared) {
      throw new Error(trans.__('The notebook was closed.'));
    }
    const names = runValueNames(model.snapshot);
    const settings = this._options.settings();
    const redacted = redactedPatterns(settings);
    const own = panel.sessionContext.session?.kernel ?? null;
    await entry.keeping;
    let reference = entry.reference;
    let at: 'end_of_run' | 'kernel_now' = 'end_of_run';
    if (!reference || names.some(n => !reference!.names.includes(n))) {
      // No values kept from the end of this run (a reload since): the run's kernel as it is now.
      at = 'kernel_now';
      reference = {
        names,
        values: own
          ? await runtime.fingerprintValues(own, names, redacted, trans)
          : {}
      };
    }
    const kernelName =
      own?.name ??
      asObject(shared.getMetadata('kernelspec')).name ??
      this._options.kernelspecs.specs?.default;
    if (typeof kernelName !== 'string' || !kernelName) {
      throw new runtime.ReproduceError(
        'kernel',
        trans.__('The notebook has no kernel spec to start a fresh kernel of.')
      );
    }
    const record = await runtime.checkReproducibility({
      path: panel.context.path,
      kernel: {
        name: kernelName,
        display_name: runtime.displayNameOf(
          this._options.kernelspecs,
          kernelName
        )
      },
      cells: runtime.cellsToRun(runtime.notebookCells(shared)),
      names,
      reference: { values: reference.values, at },
      dataFiles: runDataFiles(panel),
      redacted,
      cellTimeoutMs: settings.reproducibilityCellTimeout * 1000,
      sessions: this._options.sessions,
      signal,
      trans,
      onProgress: progress =>
        model.setReproducibility({
          kind: 'checking',
          phase: progress.phase,
          cell: progress.cell ?? 0,
          cells: progress.cells ?? 0
        })
    });
    if (!panel.isDisposed) {
      // Saved with it when the notebook had nothing unsaved: the user's own edits are theirs to save.
      const clean = panel.model?.dirty === false;
      runtime.writeReproducibilityRecord(shared, record);
      if (clean) {
        await saveFromPage(panel).catch(reason =>
          console.warn(
            'Notebook-BCC: the check’s record was not saved.',
            reason
          )
        );
      }
    }
    return record;
  }

  /** Stops the notebook's check; its fresh kernel is shut down. */
  stop(panel: NotebookPanel): void {
    this._entries.get(panel)?.checking?.abort();
  }

  private _adopt(entry: IRunnerEntry): void {
    const { panel, runner } = entry;
    if (this._entries.has(panel)) {
      return;
    }
    const own: IEntry = {
      panel,
      ran: false,
      reference: null,
      keeping: null,
      checking: null
    };
    this._entries.set(panel, own);
    runner.progressChanged.connect((_, snapshot) => {
      own.ran ||= snapshot.running;
    }, this);
    runner.stateChanged.connect((_, transition) => {
      if (transition.event === 'START_WORKFLOW') {
        own.reference = null;
      }
    }, this);
    runner.finished.connect(
      (_, finished) => this._onFinished(own, finished),
      this
    );
    panel.disposed.connect(() => {
      own.checking?.abort();
      this._entries.delete(panel);
    });
  }

  /** A run that completed: its values as its kernel holds them now, then the check if the setting asks. */
  private _onFinished(entry: IEntry, finished: IRunFinished): void {
    const ran = entry.ran;
    entry.ran = false;
    if (finished.reason !== 'completed' || !ran) {
      return;
    }
    const { panel } = entry;
    const model = this._options.models.model(panel);
    const kernel = panel.sessionContext.session?.kernel;
    if (!model || !kernel) {
      return;
    }
    // A check asked for meanwhile (the user clicks as the run ends) waits for these values.
    const keeping = this._keepValues(
      entry,
      kernel,
      runValueNames(model.snapshot)
    );
    entry.keeping = keeping;
    void keeping.then(async () => {
      if (entry.keeping === keeping) {
        entry.keeping = null;
      }
      if (this._options.settings().checkReproducibility && !panel.isDisposed) {
        await this.check(panel);
      }
    });
  }

  private async _keepValues(
    entry: IEntry,
    kernel: Kernel.IKernelConnection,
    names: string[]
  ): Promise<void> {
    try {
      const runtime = await loadRuntime();
      entry.reference = {
        names,
        values: await runtime.fingerprintValues(
          kernel,
          names,
          redactedPatterns(this._options.settings()),
          this._options.trans
        )
      };
    } catch (reason) {
      console.warn(
        'Notebook-BCC: the run’s values were not kept for the reproducibility check.',
        reason
      );
    }
  }

  /** The check the notebook's metadata keeps, shown until another is made. */
  private _showStored(panel: NotebookPanel, model: IRunModel): void {
    void panel.context.ready.then(() => {
      const raw = asObject(
        panel.model?.sharedModel.getMetadata(CELL_METADATA_KEY)
      )[REPRODUCIBILITY_KEY];
      const record = readReproducibilityRecord(raw);
      if (record && !model.reproducibility) {
        model.setReproducibility({ kind: 'done', record });
      }
    });
  }

  private readonly _entries = new Map<NotebookPanel, IEntry>();
}

export namespace ReproducibilityChecks {
  export interface IOptions {
    runners: Pick<IWorkflowRunnerRegistry, 'runnerAdded' | 'entries'>;
    models: Pick<IRunModelRegistry, 'model' | 'modelAdded'>;
    sessions: Session.IManager;
    kernelspecs: KernelSpec.IManager;
    settings: () => IRunSettings;
    trans: TranslationBundle;
  }
}
