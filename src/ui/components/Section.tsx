import * as React from 'react';

export interface ISectionProps {
  title: string;
  /** Shown beside the title when given. */
  count?: number;
  /** Starts unfolded; default true. */
  open?: boolean;
  /** Added to `jp-bcc-section`. */
  className: string;
  children: React.ReactNode;
}

/** A foldable section of the sidebar. */
export function Section(props: ISectionProps): JSX.Element {
  return (
    <details
      className={`jp-bcc-section ${props.className}`}
      open={props.open ?? true}
    >
      <summary className="jp-bcc-section-title">
        {props.title}
        {props.count !== undefined ? (
          <span className="jp-bcc-count">{props.count}</span>
        ) : null}
      </summary>
      {props.children}
    </details>
  );
}
