import { asksForTarget, columnsIn, targetColumnOf } from '../target';

const HOUSING = ['Id', 'HouseStyle', 'LotArea', 'OverallQual', 'SalePrice'];
const SALES = ['month', 'region', 'units', 'revenue'];

describe('targetColumnOf', () => {
  it('reads the column after "drives" and its kin', () => {
    expect(
      targetColumnOf('Explore housing.csv: what drives SalePrice', HOUSING)
    ).toBe('SalePrice');
    expect(targetColumnOf('Predict `revenue` per region', SALES)).toBe(
      'revenue'
    );
    expect(targetColumnOf('The target column is units', SALES)).toBe('units');
  });

  it('takes a column named in brackets when the words after "drives" are not one', () => {
    expect(
      targetColumnOf(
        'What drives the price paid for listed houses (SalePrice)?',
        [...HOUSING, 'ListPrice']
      )
    ).toBe('SalePrice');
  });

  it('prefers the longer of two columns named at the same place', () => {
    expect(targetColumnOf('What drives SalePrice?', [...HOUSING, 'Sale'])).toBe(
      'SalePrice'
    );
    expect(targetColumnOf('What drives Sale?', [...HOUSING, 'Sale'])).toBe(
      'Sale'
    );
  });

  it('finds no target in a task that names none, or names no column', () => {
    expect(targetColumnOf('What drives the market?', HOUSING)).toBeNull();
    expect(targetColumnOf('What drives house prices?', SALES)).toBeNull();
    // A column mentioned without asking what drives it is not a target.
    expect(targetColumnOf('Explore LotArea and SalePrice', HOUSING)).toBeNull();
    expect(targetColumnOf('What drives SalePrice?', [])).toBeNull();
  });
});

describe('asksForTarget', () => {
  it('tells a question about a target from a plain exploration', () => {
    expect(asksForTarget('What drives house prices?')).toBe(true);
    expect(asksForTarget('房价受哪些因素影响？')).toBe(true);
    expect(asksForTarget('预测销量')).toBe(true);
    expect(asksForTarget('Explore housing.csv')).toBe(false);
    expect(asksForTarget('请接受这份数据并做探索性分析')).toBe(false);
  });
});

describe('columnsIn', () => {
  it('reads the columns the load step printed, the latest first', () => {
    const printed =
      'Loaded x.csv: 3 rows x 2 columns\nColumns: ["房价", "a \\"b\\""]\n';
    expect(columnsIn(['Columns: ["old"]', printed])).toEqual(['房价', 'a "b"']);
  });

  it('reads nothing from a line cut short or from other output', () => {
    expect(columnsIn(['Columns: ["Id", "Sale'])).toBeNull();
    expect(columnsIn(['Columns: 25 entries, Id to SalePrice'])).toBeNull();
    expect(columnsIn([])).toBeNull();
  });
});
