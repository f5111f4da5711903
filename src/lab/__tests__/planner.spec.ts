import { DEFAULT_SETTINGS, IRunSettings } from '../../engine/settings';
import { SettingsPlannerService } from '../planner';
import { toRunSettings } from '../settings';

const ANSWER = JSON.stringify({ targetAchieved: true });

function respond(status: number, headers: Record<string, string> = {}) {
  return {
    ok: status < 400,
    status,
    headers: new Headers(headers),
    text: async () => (status === 200 ? ANSWER : '{"error":"busy"}'),
    json: async () => JSON.parse(status === 200 ? ANSWER : '{}'),
    body: null
  } as unknown as Response;
}

describe('SettingsPlannerService', () => {
  let settings: IRunSettings;
  const calls: { url: string; headers: Record<string, string> }[] = [];
  let answers: Response[];
  const service = new SettingsPlannerService({
    settings: () => settings,
    notebookId: () => 'work/analysis.ipynb',
    fetch: async (url, init) => {
      calls.push({ url, headers: init.headers as Record<string, string> });
      return answers.shift() ?? respond(200);
    }
  });
  const request = { observation: { location: {} } };

  beforeEach(() => {
    settings = { ...DEFAULT_SETTINGS, baseUrl: 'http://planner.test' };
    calls.length = 0;
    answers = [];
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });

  it('sends the notebook path as the session id, and the token', async () => {
    settings = { ...settings, token: 'secret' };
    await service.planning(request);
    expect(calls[0].url).toBe('http://planner.test/planning');
    const headers = new Headers(calls[0].headers);
    expect(headers.get('X-Notebook-Id')).toBe('work/analysis.ipynb');
    expect(headers.get('Authorization')).toBe('Bearer secret');
  });

  it('follows a changed base URL at the next request', async () => {
    await service.planning(request);
    settings = { ...settings, baseUrl: 'http://other.test' };
    await service.planning(request);
    expect(calls.map(c => c.url)).toEqual([
      'http://planner.test/planning',
      'http://other.test/planning'
    ]);
  });

  it('tells the run why it waits when the planner asks to retry later', async () => {
    answers = [respond(429, { 'Retry-After': '0' }), respond(200)];
    const warnings: string[] = [];
    const answer = await service.planning(request, {
      onWarning: message => warnings.push(message)
    });
    expect(answer.targetAchieved).toBe(true);
    expect(calls).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/429.*retrying/);
  });
});

describe('toRunSettings', () => {
  it('maps the composite settings, keeping defaults for what is invalid', () => {
    const mapped = toRunSettings({
      baseUrl: ' http://host:1234/ ',
      maxExecutionSteps: 5,
      interactive: true,
      startMode: 'generation',
      executionTimeout: -3,
      followNewCells: 'yes'
    });
    expect(mapped).toMatchObject({
      baseUrl: 'http://host:1234',
      maxExecutionSteps: 5,
      interactive: true,
      startMode: 'generation',
      executionTimeout: DEFAULT_SETTINGS.executionTimeout,
      followNewCells: DEFAULT_SETTINGS.followNewCells
    });
    expect(toRunSettings({})).toEqual(DEFAULT_SETTINGS);
  });
});
