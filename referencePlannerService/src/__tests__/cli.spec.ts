import { parseCli, UsageError } from '../cli';

describe('planner command line: exposure', () => {
  it('binds 127.0.0.1, names no CORS origin and needs no token by default', () => {
    const { server } = parseCli([]);
    expect(server.host).toBe('127.0.0.1');
    expect(server.corsOrigins).toEqual([]);
    expect(server.token).toBeNull();
  });

  it('takes --token and one or more --cors-origin', () => {
    const { server } = parseCli([
      '--token',
      's3cret',
      '--cors-origin',
      'http://localhost:8888/',
      '--cors-origin',
      'https://hub.example.org'
    ]);
    expect(server.token).toBe('s3cret');
    expect(server.corsOrigins).toEqual([
      'http://localhost:8888',
      'https://hub.example.org'
    ]);
  });

  it('takes one or more --allowed-host, none by default', () => {
    expect(parseCli([]).server.allowedHosts).toEqual([]);
    expect(
      parseCli([
        '--allowed-host',
        'planner.internal',
        '--allowed-host',
        'planner.corp.example'
      ]).server.allowedHosts
    ).toEqual(['planner.internal', 'planner.corp.example']);
  });

  it('rejects a CORS origin with a path or without a scheme', () => {
    expect(() =>
      parseCli(['--cors-origin', 'http://localhost:8888/lab'])
    ).toThrow(UsageError);
    expect(() => parseCli(['--cors-origin', 'localhost:8888'])).toThrow(
      /--cors-origin "localhost:8888" is not an origin/
    );
    expect(() => parseCli(['--cors-origin', '*'])).toThrow(UsageError);
  });
});

describe('planner command line: pace', () => {
  it('runs at full speed unless --pace names a pace', () => {
    expect(parseCli([]).server.paceMs).toBe(0);
    expect(parseCli(['--pace', '250']).server.paceMs).toBe(250);
    expect(() => parseCli(['--pace', 'slow'])).toThrow(
      /--pace "slow": expected a number >= 0/
    );
  });
});
