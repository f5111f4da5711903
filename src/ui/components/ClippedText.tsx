import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

/** Texts longer than this are clipped behind "Show more". */
const CLIP = 400;

export interface IClippedTextProps {
  text: string;
  trans: TranslationBundle;
}

/** Preformatted text, clipped when long, with a button to show all of it. */
export function ClippedText(props: IClippedTextProps): JSX.Element {
  const [open, setOpen] = React.useState(false);
  const { text, trans } = props;
  const long = text.length > CLIP;
  return (
    <div className="jp-bcc-clipped">
      <pre className="jp-bcc-effect-text">
        {long && !open ? `${text.slice(0, CLIP)}…` : text}
      </pre>
      {long ? (
        <button
          type="button"
          className="jp-bcc-link-button"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          {open ? trans.__('Show less') : trans.__('Show more')}
        </button>
      ) : null}
    </div>
  );
}
