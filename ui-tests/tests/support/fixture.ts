/**
 * The UI tests' fixture: galata's test with the server's copy of this extension's settings and the
 * test's kernels cleaned up, the settings of a test (`settingsFor`, `configure`) and the shared paths.
 */
import { expect, galata, test as base } from '@jupyterlab/galata';
import type { APIRequestContext, Page } from '@playwright/test';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { plannerUrl } = require('../../planners');

export const SIDEBAR = '#jp-bcc-sidebar';
export const PLUGIN = 'jupyterlab-notebook-bcc:plugin';
export const HOUSING = path.resolve(
  __dirname,
  '../../../demo/data/housing.csv'
);
export const SCREENSHOTS = path.resolve(__dirname, '../../screenshots');
export const RUN_STATE_KEY = 'notebook_bcc_run';

/**
 * Galata's test, with the kernels API left alone: galata's kernel mock fails on the empty (204) answer
 * of an interrupt, which Stop sends. Kernels started during a test are shut down after it.
 */
export const test = base.extend<{
  kernelCleanup: void;
  serverSettings: void;
}>({
  kernels: async ({}, use) => {
    await use(null);
  },
  // Galata mocks settings inside the page; the planner relay reads the user's settings on the server,
  // so the test's settings of this extension are written there too (and reset after the test).
  serverSettings: [
    async ({ mockSettings, request }, use) => {
      const ours =
        typeof mockSettings === 'object' && mockSettings
          ? ((mockSettings as Record<string, unknown>)[PLUGIN] ?? {})
          : {};
      await putServerSettings(request, ours as Record<string, unknown>);
      await use();
      await putServerSettings(request, {});
    },
    { auto: true }
  ],
  kernelCleanup: [
    async ({ request }, use) => {
      const list = async (): Promise<string[]> => {
        const response = await request.get('api/kernels');
        return response.ok()
          ? ((await response.json()) as { id: string }[]).map(k => k.id)
          : [];
      };
      const before = new Set(await list());
      await use();
      for (const id of await list()) {
        if (!before.has(id)) {
          await request.delete(`api/kernels/${id}`);
        }
      }
    },
    { auto: true }
  ]
});

export { expect };

export type PlannerName = 'normal' | 'failing' | 'slow';

/** Galata's default settings plus ours: which planner, and any other run setting. */
export function settingsFor(
  planner: PlannerName,
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    ...galata.DEFAULT_SETTINGS,
    [PLUGIN]: { baseUrl: plannerUrl(planner), ...extra }
  };
}

/** Changes our settings through JupyterLab's setting registry, as the settings editor does. */
export async function configure(
  page: Page,
  values: Record<string, unknown>
): Promise<void> {
  await page.evaluate(
    async ({ plugin, values }) => {
      const registry = (await window.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      )) as unknown as {
        set(plugin: string, key: string, value: unknown): Promise<void>;
      };
      for (const [key, value] of Object.entries(values)) {
        await registry.set(plugin, key, value);
      }
    },
    { plugin: PLUGIN, values }
  );
  const current = await page.request.get(SETTINGS_API);
  const raw = current.ok()
    ? ((await current.json()) as { raw?: string }).raw
    : undefined;
  await putServerSettings(page.request, {
    ...parseRaw(raw),
    ...values
  });
}

// Relative: resolved against the test's baseURL, base path included (a JupyterLab under /user/alice/).
const SETTINGS_API = `lab/api/settings/${PLUGIN}`;

/** Writes this extension's user settings on the server (where the planner relay reads them). */
async function putServerSettings(
  request: APIRequestContext,
  values: Record<string, unknown>
): Promise<void> {
  const response = await request.put(SETTINGS_API, {
    data: { raw: JSON.stringify(values) }
  });
  if (!response.ok()) {
    throw new Error(
      `Could not write the server's settings: HTTP ${response.status()} ${await response.text()}`
    );
  }
}

function parseRaw(raw: string | undefined): Record<string, unknown> {
  try {
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    return parsed && typeof parsed === 'object'
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
