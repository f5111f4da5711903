import { normalizePlanningResponse, PlanningResponse } from '..';

function responseOf(raw: unknown): {
  response: PlanningResponse;
  warnings: string[];
} {
  const result = normalizePlanningResponse(raw);
  if (!result.ok) {
    throw new Error(result.error);
  }
  return result;
}

describe('normalizePlanningResponse: the LLM planner usage', () => {
  it('keeps the usage of the answer: the model, the tokens of the behavior and the run, the cost', () => {
    const usage = {
      model: 'gemma',
      behavior: { prompt_tokens: 812, completion_tokens: 143 },
      run: { prompt_tokens: 5120, completion_tokens: 990, model_calls: 7 },
      cost: { run: 0.0123, behavior: 0.001, currency: 'USD' }
    };
    const { response, warnings } = responseOf({
      targetAchieved: false,
      usage
    });
    expect(response.usage).toEqual(usage);
    expect(warnings).toEqual([]);
  });

  it('reads a behavior of null (none ended yet) as absent, and camelCase or text counts as the canonical form', () => {
    const { response, warnings } = responseOf({
      targetAchieved: false,
      usage: {
        model: 'gemma',
        behavior: null,
        run: { promptTokens: '700', completionTokens: 90, modelCalls: 1 }
      }
    });
    expect(response.usage).toEqual({
      model: 'gemma',
      run: { prompt_tokens: 700, completion_tokens: 90, model_calls: 1 }
    });
    expect(warnings).toEqual([]);
  });

  it('drops what it cannot read with a warning, and keeps the rest of the answer', () => {
    const { response, warnings } = responseOf({
      targetAchieved: true,
      usage: {
        model: 'gemma',
        run: { prompt_tokens: -3 },
        cost: { run: 0.5, currency: 'EUR' }
      }
    });
    expect(response.targetAchieved).toBe(true);
    expect(response.usage).toEqual({
      model: 'gemma',
      cost: { run: 0.5, currency: 'EUR' }
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^usage\.run ignored: /);
  });

  it('ignores a usage that is not an object, with a warning', () => {
    const { response, warnings } = responseOf({
      targetAchieved: true,
      usage: 'lots'
    });
    expect(response).not.toHaveProperty('usage');
    expect(warnings).toEqual([
      'usage ignored: expected an object, got string "lots"'
    ]);
  });
});
