import { stateDbMemory } from '../runDialogMemory';

describe("the Run dialog's memory in the state database", () => {
  it("keeps each notebook's last run, and the last run anywhere for a notebook without one", async () => {
    const values = new Map<string, unknown>();
    const store = stateDbMemory({
      fetch: async (id: string) => values.get(id) as never,
      save: async (id: string, value: unknown) => {
        values.set(id, value);
      }
    });
    const sales = {
      task: 'Forecast revenue',
      dataFiles: ['work/sales.csv'],
      targetColumn: null
    };
    const housing = {
      task: 'What drives prices?',
      dataFiles: ['h.csv'],
      targetColumn: 'SalePrice'
    };
    await store.save('work/a.ipynb', sales);
    await store.save('b.ipynb', housing);
    expect(await store.load('work/a.ipynb')).toEqual(sales);
    expect(await store.load('work/new.ipynb')).toEqual(housing);
  });
});
