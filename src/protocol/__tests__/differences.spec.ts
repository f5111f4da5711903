/**
 * docs/protocol.md and docs/dialects.md end with the list of places where the code departs from the
 * documents it implements, each entry naming the test that pins it as `path`, “title”. An entry
 * whose test is gone (renamed, deleted, moved) is no longer pinned: this fails.
 */
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';

const ROOT = join(__dirname, '..', '..', '..');

interface IEntry {
  doc: string;
  text: string;
  tests: { path: string; title: string }[];
}

/** The list items of the document's last `##` section, which must be its differences list. */
function differences(doc: string): { heading: string; entries: IEntry[] } {
  const text = readFileSync(join(ROOT, doc), 'utf-8');
  const sections = text.split(/^## /m);
  const last = sections[sections.length - 1];
  const heading = last.split('\n', 1)[0].trim();
  const items = last
    .split(/^- /m)
    .slice(1)
    .map(item => item.trim());
  return {
    heading,
    entries: items.map(item => ({
      doc,
      text: item.replace(/\s+/g, ' ').slice(0, 120),
      tests: [...item.matchAll(/`([^`\s]+\.spec\.ts)`, “([^”]+)”/g)].map(
        match => ({ path: match[1], title: match[2] })
      )
    }))
  };
}

describe.each(['docs/protocol.md', 'docs/dialects.md'])(
  'the differences listed at the end of %s',
  doc => {
    const { heading, entries } = differences(doc);

    it('are the document’s last section, and not empty', () => {
      expect(heading).toMatch(/^Where the code (may still )?differ/);
      expect(entries.length).toBeGreaterThan(0);
    });

    it('each name the test that pins them', () => {
      const unpinned = entries.filter(entry => entry.tests.length === 0);
      expect(unpinned.map(entry => entry.text)).toEqual([]);
    });

    it('name only tests that exist', () => {
      const missing: string[] = [];
      for (const entry of entries) {
        for (const { path, title } of entry.tests) {
          const file = join(ROOT, path);
          if (!existsSync(file)) {
            missing.push(`${path} (no such file): ${entry.text}`);
          } else if (!readFileSync(file, 'utf-8').includes(title)) {
            missing.push(`${path}: no test “${title}”`);
          }
        }
      }
      expect(missing).toEqual([]);
    });
  }
);
