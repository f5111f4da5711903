import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import { formatElapsed } from '../present';

export interface IWaitingLineProps {
  /** When the request was sent (ms since the epoch). */
  since: number;
  trans: TranslationBundle;
}

/** "Waiting for the planner… 1 min 12 s", ticking every second while shown. */
export function WaitingLine(props: IWaitingLineProps): JSX.Element {
  const { since, trans } = props;
  const [now, setNow] = React.useState(() => Date.now());
  React.useEffect(() => {
    setNow(Date.now());
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [since]);
  return (
    // A timer, not a status: a status would be read out at every tick; the state line announces the wait.
    <div className="jp-bcc-waiting" role="timer" data-since={since}>
      {trans.__(
        'Waiting for the planner… %1',
        formatElapsed(Math.max(0, now - since), trans)
      )}
    </div>
  );
}
