/**
 * The rewrites of a behavior in the approval dialog (interactive mode): each cell's code now against
 * the planner's fix, as a unified diff in which the fix can be edited before it is accepted. The view
 * is `@codemirror/merge` on the CodeMirror JupyterLab shares with its extensions (`@codemirror/view`
 * and `state` are singletons, never bundled here), in JupyterLab's editor theme, so light and dark
 * themes both apply. A chunk of its own, loaded when a behavior with a rewrite asks for approval.
 */
import { unifiedMergeView } from '@codemirror/merge';
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { EditorLanguageRegistry, jupyterTheme } from '@jupyterlab/codemirror';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IRewriteReview } from '../engine/types';
import { element } from './element';

/** Python highlighting from JupyterLab's own languages; none when it cannot be loaded. */
async function python(): Promise<Extension> {
  try {
    const languages = new EditorLanguageRegistry();
    for (const language of EditorLanguageRegistry.getDefaultLanguages()) {
      languages.addLanguage(language);
    }
    return (await languages.getLanguage('python'))?.support ?? [];
  } catch {
    return [];
  }
}

function darkTheme(): boolean {
  return document.body.dataset.jpThemeLight === 'false';
}

/** The cell as the user finds it: its place in the notebook, and the planner's name for it. */
function cellName(
  rewrite: Pick<IRewriteReview, 'position' | 'reference'>,
  trans: TranslationBundle
): string {
  return rewrite.position === null
    ? trans.__('“%1”', rewrite.reference)
    : trans.__('%1 (“%2”)', rewrite.position, rewrite.reference);
}

/** What the review says of where a fix goes. */
function where(rewrite: IRewriteReview, trans: TranslationBundle): string {
  const name = cellName(rewrite, trans);
  if (rewrite.inPlace) {
    return trans.__(
      'The fix replaces the code of cell %1; the code it holds now is kept in the cell’s attempts.',
      name
    );
  }
  return rewrite.cellId
    ? trans.__(
        'You edited cell %1 (or it is not the run’s): it is not rewritten, the fix goes below it as a new cell.',
        name
      )
    : trans.__(
        'The cell %1 is gone: the fix goes at the end of the notebook as a new cell.',
        name
      );
}

/** The diffs of a behavior's rewrites, each editable; `edits` says which fixes the user changed. */
export class RewriteReview {
  private constructor(
    readonly node: HTMLElement,
    private readonly _views: { rewrite: IRewriteReview; view: EditorView }[]
  ) {}

  /**
   * Renders `rewrites` (with the language loaded first, so the diffs open highlighted); `below` gives
   * what is shown under a diff (what the fix reaches outside the notebook), if anything.
   */
  static async create(
    rewrites: readonly IRewriteReview[],
    trans: TranslationBundle,
    below: (rewrite: IRewriteReview) => HTMLElement | null = () => null
  ): Promise<RewriteReview> {
    const language = await python();
    const node = element('div', 'jp-bcc-rewrite-review');
    const views = rewrites.map((rewrite, index) => {
      const section = element('section', 'jp-bcc-rewrite');
      section.append(
        element(
          'p',
          'jp-bcc-approval-intro',
          trans.__(
            'Fix %1 of %2: %3',
            index + 1,
            rewrites.length,
            where(rewrite, trans)
          )
        )
      );
      const host = element('div', 'jp-bcc-rewrite-diff');
      host.dataset.cellId = rewrite.cellId ?? '';
      host.setAttribute(
        'aria-label',
        trans.__(
          'The code of cell %1 (removed lines) and the fix (added lines); edit the fix before accepting it',
          cellName(rewrite, trans)
        )
      );
      section.append(host);
      const under = below(rewrite);
      if (under) {
        section.append(under);
      }
      node.append(section);
      const view = new EditorView({
        parent: host,
        state: EditorState.create({
          doc: rewrite.after,
          extensions: [
            jupyterTheme,
            EditorView.darkTheme.of(darkTheme()),
            EditorView.lineWrapping,
            language,
            unifiedMergeView({
              original: rewrite.before,
              mergeControls: false,
              gutter: true,
              syntaxHighlightDeletions: true
            })
          ]
        })
      });
      return { rewrite, view };
    });
    return new RewriteReview(node, views);
  }

  /** The fixes the user changed: action index → the code accepted. */
  edits(): Record<number, string> {
    const edits: Record<number, string> = {};
    for (const { rewrite, view } of this._views) {
      const code = view.state.doc.toString();
      if (code !== rewrite.after) {
        edits[rewrite.index] = code;
      }
    }
    return edits;
  }

  dispose(): void {
    this._views.forEach(({ view }) => view.destroy());
  }
}
