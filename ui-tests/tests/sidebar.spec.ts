import { expect, test } from '@jupyterlab/galata';

const SIDEBAR_ID = 'jp-bcc-sidebar';

test.describe('Notebook-BCC foundation', () => {
  let extensionErrors: string[];

  test.beforeEach(({ page }) => {
    extensionErrors = [];
    page.on('console', message => {
      const text = message.text();
      if (
        message.type() === 'error' &&
        /notebook-bcc|notebook_bcc|bcc/i.test(text)
      ) {
        extensionErrors.push(text);
      }
    });
    page.on('pageerror', error => extensionErrors.push(error.message));
  });

  test('the extension is listed and its sidebar tab is in the right area', async ({
    page
  }) => {
    const tab = page.locator(
      `.jp-SideBar.jp-mod-right li[data-id="${SIDEBAR_ID}"]`
    );
    await expect(tab).toHaveCount(1);
    await expect(page.locator(`#${SIDEBAR_ID}`)).toBeHidden();
    expect(extensionErrors).toEqual([]);
  });

  test('the palette command opens the sidebar', async ({ page }) => {
    await page.keyboard.press('Control+Shift+C');
    const palette = page.locator('#command-palette');
    await expect(palette).toBeVisible();
    await palette.locator('input').fill('Open Workflow Panel');
    await palette
      .locator('.lm-CommandPalette-item', { hasText: 'Open Workflow Panel' })
      .first()
      .click();
    const sidebar = page.locator(`#${SIDEBAR_ID}`);
    await expect(sidebar).toBeVisible();
    await expect(sidebar.locator('.jp-bcc-sidebar-title')).toHaveText(
      'Workflow'
    );
    expect(extensionErrors).toEqual([]);
  });

  test('the command is registered under its id', async ({ page }) => {
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('notebook-bcc:open');
    });
    await expect(page.locator(`#${SIDEBAR_ID}`)).toBeVisible();
    expect(extensionErrors).toEqual([]);
  });
});
