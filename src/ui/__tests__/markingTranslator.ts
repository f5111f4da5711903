/**
 * A translation bundle that marks what it translates: `⟦…⟧` around each template it fills, so a test
 * sees which words went through the translator and which (a URL, a cause) were shown as they are.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { fillTemplate } from '../../engine/messages';

function mark(template: string, args: unknown[]): string {
  return `⟦${fillTemplate(
    template,
    args.map(a => (typeof a === 'number' ? a : String(a)))
  )}⟧`;
}

export const markingTrans = {
  __: (msgid: string, ...args: unknown[]) => mark(msgid, args),
  _n: (msgid: string, plural: string, n: number, ...args: unknown[]) =>
    mark(n === 1 ? msgid : plural, [n, ...args]),
  _p: (_context: string, msgid: string, ...args: unknown[]) => mark(msgid, args)
} as unknown as TranslationBundle;
