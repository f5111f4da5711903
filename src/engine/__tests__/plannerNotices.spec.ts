/**
 * What the client says about its own work (a retry, a trimmed context) is shown to the user and never
 * sent to the planner as an effect: effects are what the code produced (docs/protocol.md#effects).
 */
import { DslcAdapter } from '../../protocol';
import type { IPlannerService } from '../types';
import { RunTrace } from '../trace';
import { ONE_STEP, setup } from './runnerSetup';

describe('notices about the client’s own work', () => {
  it('shows a /planning retry in the panel and keeps it out of the effects sent to the planner', async () => {
    const trace = new RunTrace();
    const answers: Record<string, Response[]> = {
      '/planning': [
        new Response('busy', { status: 503 }),
        Response.json({
          targetAchieved: false,
          context_update: { workflow_update: { workflowTemplate: ONE_STEP } }
        }),
        new Response('busy', { status: 503 }),
        Response.json({ target_achieved: true })
      ],
      '/generating': [
        new Response(
          '{"action": {"action": "add", "shot_type": "dialogue", "content": "hi"}}\n'
        )
      ]
    };
    const sent: string[] = [];
    const client = new DslcAdapter({
      baseUrl: 'http://planner.local:28600',
      fetch: async (url: string) =>
        answers[new URL(url).pathname]?.shift() ??
        new Response('missing', { status: 404 }),
      sleep: async () => undefined,
      observer: [
        trace,
        { onRequest: (_, body) => sent.push(JSON.stringify(body)) }
      ]
    });
    // As the settings' planner service hands the client's warnings of a /planning call to the engine.
    const service: IPlannerService = {
      planning: (request, options = {}) =>
        client.planning(request, {
          signal: options.signal,
          observer: { onWarning: (_, warning) => options.onWarning?.(warning) }
        }),
      generating: (request, options) => client.generating(request, options)
    };
    const { runner, warnings } = setup(service, { trace });
    expect((await runner.start({ task: 't' })).reason).toBe('completed');
    expect(warnings.filter(w => /retrying in/.test(w.message))).toHaveLength(2);
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(sent.filter(body => /retrying/.test(body))).toEqual([]);
  });
});
