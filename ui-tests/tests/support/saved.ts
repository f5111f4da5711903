/** What a run left in the notebook file, read from the server, and the panel's lists of warnings and effects. */
import { expect } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { RUN_STATE_KEY } from './fixture';
import { panel } from './notebook';
import { ICellContent, ICellInfo } from './probe';

export interface ISavedNotebook {
  metadata: Record<string, unknown>;
  cells: Array<{
    id?: string;
    cell_type: string;
    source: string | string[];
    metadata?: Record<string, unknown>;
  }>;
}

/**
 * The notebook as saved on the server (the file, not the page's model), read from the server's disk.
 * Not through the contents API: a GET that lands while the server writes a large notebook finds half a
 * file and "recovers" it from the server's backup copy, which breaks the save under way (jupyter_server's
 * atomic writing), so a test polling the file would change what it measures. A file read mid-write is
 * read again until it parses, for up to 10 s.
 */
export async function savedNotebook(
  page: Page,
  notebookPath: string
): Promise<ISavedNotebook> {
  const root = await page.evaluate(() => {
    const data = document.getElementById('jupyter-config-data');
    return (JSON.parse(data?.textContent ?? '{}') as { serverRoot?: string })
      .serverRoot;
  });
  if (!root) {
    throw new Error('savedNotebook: the page does not say its server root');
  }
  const file = path.join(root, notebookPath);
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf-8')) as ISavedNotebook;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`savedNotebook: ${file} unreadable: ${error}`);
      }
      await new Promise(resolve => setTimeout(resolve, 200));
    }
  }
}

/** The cells of a saved notebook, as `ICellContent`. */
export function savedCells(file: ISavedNotebook): ICellContent[] {
  return file.cells.map(cell => ({
    id: cell.id ?? '',
    type: cell.cell_type,
    source: Array.isArray(cell.source) ? cell.source.join('') : cell.source
  }));
}

/** The run state in a saved notebook: its FSM state, phase and task. */
export function runStateIn(
  file: ISavedNotebook
): { state: string; phase: string; task: string } | null {
  const saved = file.metadata[RUN_STATE_KEY] as
    | {
        format?: string;
        fsm?: { state?: string };
        phase?: string;
        task?: string;
      }
    | undefined;
  if (!saved || saved.format !== 'notebook-bcc-run') {
    return null;
  }
  return {
    state: saved.fsm?.state ?? '',
    phase: saved.phase ?? '',
    task: saved.task ?? ''
  };
}

/** The run state saved in the notebook file. */
export async function savedRun(
  page: Page,
  path: string
): Promise<{ state: string; phase: string; task: string } | null> {
  return runStateIn(await savedNotebook(page, path));
}

/** The cells of `before` still in `after` with the same id, type and source. */
export function kept(
  before: ICellContent[],
  after: ICellContent[]
): { kept: number; of: number; missing: ICellContent[] } {
  const now = new Map(after.map(c => [c.id, c]));
  const missing = before.filter(c => {
    const found = now.get(c.id);
    return found?.type !== c.type || found?.source !== c.source;
  });
  return { kept: before.length - missing.length, of: before.length, missing };
}

/** Cells that repeat another's provenance: a behavior's action applied twice. */
export function duplicates(all: ICellInfo[]): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const cell of all) {
    if (cell.madeBy !== null && cell.role !== 'title') {
      if (seen.has(cell.madeBy)) {
        twice.push(cell.madeBy);
      }
      seen.add(cell.madeBy);
    }
  }
  return twice;
}

export function warningList(page: Page) {
  return panel(page).locator('.jp-bcc-warning-list');
}

/** Opens the (collapsed) effects section of the sidebar and returns its list. */
export async function effectList(page: Page) {
  const section = panel(page).locator('details.jp-bcc-effects');
  await expect(section).toBeVisible({ timeout: 30000 });
  if ((await section.getAttribute('open')) === null) {
    await section.locator('summary').click();
  }
  return section.locator('.jp-bcc-effect-list');
}
