/**
 * What a planner writes cannot load anything by itself (docs/security.md#what-a-planner-writes): a
 * replayed planner (the reference planner's `--replay`) sends markdown with remote images and a command
 * link, pointing at 127.0.0.1 on a port nothing listens on. No request leaves the page for that URL
 * while the run's cells and the panel render; the cells show links instead. A markdown cell the user
 * writes with the same image, rendered in the same page, does load it: the check sees a request when
 * there is one.
 */
import * as net from 'net';
import {
  cellSources,
  configure,
  expect,
  installProbe,
  openNewNotebook,
  panel,
  planner,
  startRun,
  stopPlanners,
  test,
  waitForEnd
} from './helpers';
import { remoteLoadRun, twoStepTrace } from './faults/scenarios';

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>(resolve => server.close(() => resolve()));
  return port;
}

test.beforeEach(async ({ page }) => {
  await installProbe(page);
});

test.afterEach(async () => {
  await stopPlanners();
});

test('planner markdown with remote images and a command link loads nothing and shows links', async ({
  page,
  tmpPath
}) => {
  const collector = `http://127.0.0.1:${await deadPort()}/collector`;
  const requested: string[] = [];
  page.on('request', request => {
    if (request.url().startsWith(collector)) {
      requested.push(request.url());
    }
  });
  const started = await planner([
    '--replay',
    twoStepTrace(remoteLoadRun(collector))
  ]);
  await configure(page, {
    baseUrl: started.url,
    autoAcceptWorkflowUpdates: true
  });
  const path = await openNewNotebook(page, tmpPath, 'inert.ipynb');

  // The check itself: the user's own markdown cell with the same image loads it.
  await page.evaluate(source => {
    const panel = window.jupyterapp.shell.currentWidget as unknown as {
      model: {
        sharedModel: {
          insertCell(index: number, cell: Record<string, unknown>): void;
        };
      };
      content: { widgets: { rendered: boolean }[] };
    };
    panel.model.sharedModel.insertCell(0, {
      cell_type: 'markdown',
      source
    });
    panel.content.widgets[0].rendered = true;
  }, `![mine](${collector}?d=user)`);
  await expect
    .poll(() => requested, { timeout: 10000 })
    .toContain(`${collector}?d=user`);

  await startRun(page, 'Report on sales', { path });
  // While the first step is current, its focus is in the panel: a link where the image was.
  const focus = panel(page).locator('.jp-bcc-focus');
  await expect(focus.locator(`a[href="${collector}?d=focus"]`)).toHaveText(
    'f',
    {
      timeout: 60000
    }
  );
  await expect(focus.locator('img')).toHaveCount(0);
  const end = await waitForEnd(page, path, 120000);
  expect(end.state).toBe('WORKFLOW_COMPLETED');
  const sources = (await cellSources(page)).join('\n');
  expect(sources).toContain(`[chart](${collector}?d=markdown)`);
  expect(sources).toContain(`[srcset](${collector}?d=srcset)`);
  expect(sources).toContain('[logo][c]');
  expect(sources).toContain(
    `# Sales [${collector}?d=title](${collector}?d=title)`
  );
  expect(sources).toContain(
    '&lt;button data-commandlinker-command="help:about">'
  );

  // Rendered: links where the images were, the command link as text.
  const rendered = page.locator('.jp-RenderedMarkdown');
  await expect(
    rendered.locator(`a[href="${collector}?d=markdown"]`)
  ).toHaveText('chart');
  await expect(
    rendered.locator(`a[href="${collector}?d=reference"]`)
  ).toHaveText('logo');
  await expect(
    rendered.getByText(
      '<button data-commandlinker-command="help:about">Open</button>'
    )
  ).toHaveCount(1);
  // Nothing in the run's cells or the panel loads the collector or carries a command (the user's own
  // image is the check above).
  const active = await page.evaluate(target => {
    const loading = ['src', 'srcset', 'poster', 'data', 'background', 'style'];
    const found: string[] = [];
    for (const element of Array.from(
      document.querySelectorAll('.jp-RenderedMarkdown *, #jp-bcc-sidebar *')
    )) {
      for (const attribute of Array.from(element.attributes)) {
        if (
          attribute.name.startsWith('data-commandlinker') ||
          (loading.includes(attribute.name) &&
            attribute.value.includes(target) &&
            !attribute.value.endsWith('?d=user'))
        ) {
          found.push(`${element.tagName} ${attribute.name}`);
        }
      }
    }
    return found;
  }, collector);
  expect(active).toEqual([]);
  await page.waitForTimeout(1000);
  // Only the user's own image was requested.
  expect(requested.filter(url => url !== `${collector}?d=user`)).toEqual([]);
  await page.screenshot({ path: 'test-results/inert-planner-text.png' });
});
