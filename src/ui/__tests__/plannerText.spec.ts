import { describePlanner } from '../plannerText';
import { trans } from './snapshots';

describe('describePlanner: the planner line', () => {
  it('names the dialect once known', () => {
    expect(describePlanner('v1', null, trans)).toEqual({
      dialect: 'Planner: v1 dialect',
      where: null
    });
    expect(describePlanner(null, null, trans).dialect).toBe('Planner');
  });

  it("says where the relay forwards and who chose it, else the transport's label", () => {
    const via = "the Jupyter server's relay (/notebook-bcc/relay)";
    expect(
      describePlanner(
        'dslc',
        { via, url: 'http://planner.internal:28600', source: 'server' },
        trans
      ).where
    ).toBe(
      'http://planner.internal:28600 (set by your administrator), through the Jupyter server'
    );
    expect(
      describePlanner(
        null,
        { via, url: 'http://localhost:28600', source: 'user' },
        trans
      ).where
    ).toBe('http://localhost:28600, through the Jupyter server');
    expect(
      describePlanner(
        null,
        { via, url: 'http://planner.site:28600', source: 'overrides' },
        trans
      ).where
    ).toBe(
      'http://planner.site:28600 (set by your administrator), through the Jupyter server'
    );
    expect(
      describePlanner(null, { via: 'http://localhost:28600' }, trans).where
    ).toBe('http://localhost:28600');
    expect(
      describePlanner(
        null,
        { via: 'Demo planner (built in)', builtin: true },
        trans
      ).where
    ).toBe(
      "A fixed pandas analysis. Set your planner's URL in Settings > Notebook-BCC."
    );
  });
});
