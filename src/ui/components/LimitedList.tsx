import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

/** Items shown before "Show all". */
const LIMIT = 8;

export interface ILimitedListProps<T> {
  items: T[];
  /** Renders one item as an `<li>`. */
  render: (item: T, index: number) => JSX.Element;
  className: string;
  /** The list's accessible name. */
  label: string;
  trans: TranslationBundle;
}

/** An ordered list that shows its first items, and all of them on demand. */
export function LimitedList<T>(props: ILimitedListProps<T>): JSX.Element {
  const [all, setAll] = React.useState(false);
  const { items, trans } = props;
  const shown = all ? items : items.slice(0, LIMIT);
  return (
    <>
      <ol className={props.className} aria-label={props.label}>
        {shown.map(props.render)}
      </ol>
      {items.length > LIMIT ? (
        <button
          type="button"
          className="jp-bcc-link-button"
          onClick={() => setAll(!all)}
        >
          {all ? trans.__('Show fewer') : trans.__('Show all %1', items.length)}
        </button>
      ) : null}
    </>
  );
}
