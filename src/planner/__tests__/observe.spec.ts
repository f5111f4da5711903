import type { Observation } from '../../protocol';
import { targetOf } from '../observe';

function withTask(task: string): Observation {
  return {
    location: {},
    context: { variables: { problem_description: task } }
  } as Observation;
}

describe('targetOf', () => {
  it('reads the column after "drives" and its kin', () => {
    expect(
      targetOf(withTask('Explore housing.csv: what drives SalePrice'))
    ).toBe('SalePrice');
    expect(targetOf(withTask('Predict `revenue` per region'))).toBe('revenue');
  });

  it('takes a column named in brackets when the words after "drives" are not one', () => {
    expect(
      targetOf(withTask('What drives the sale price of houses (SalePrice)?'))
    ).toBe('SalePrice');
  });

  it('finds no target in a task that names none', () => {
    expect(targetOf(withTask('What drives the market?'))).toBeNull();
  });
});
