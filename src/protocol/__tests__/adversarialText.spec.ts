/**
 * Every parser of planner text reads a 10 kB adversarial answer to its end (docs/protocol.md#limits):
 * runs of the characters its patterns repeat, and openings that never close. A pattern that
 * backtracks without bound makes one of these calls take minutes; the bound below only catches one
 * that has become slow (the speed itself is measured by the benchmarks).
 */
import {
  actionEvents,
  actionsInMessage,
  ActionLineParser,
  NdjsonLineSplitter
} from '../actionStream';
import { unwrapCodeFence } from '../codeFence';
import { excerpt } from '../errors';
import { parseRetryAfter } from '../exchange';
import { normalizeAction, normalizeWorkflowTemplate } from '../normalize';
import { normalizePlanningResponse } from '../normalizeResponse';
import type { PlanningRequestInput } from '../schemas';
import { BccAdapter } from '../dialects/bcc/adapter';
import {
  planningAnswerFromJson,
  planningAnswerFromXml,
  reflectionFromNdjson,
  reflectionFromXml
} from '../dialects/bcc/answers';
import {
  isRouteMissingBody,
  looksLikeXml,
  parseJson,
  unquotedBody
} from '../dialects/common';
import { detectDialect } from '../dialects/detect';
import { V1Adapter } from '../dialects/v1/adapter';
import {
  describeData,
  detailOf,
  missingVariableNames,
  problemName
} from '../dialects/v1/state';
import { parseLenientXml } from '../dialects/xml';
import {
  collect,
  FakeTransport,
  text
} from '../dialects/__tests__/fakeTransport';

const SIZE = 10_000;
const fill = (unit: string) =>
  unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

/** ~10 kB each: repeated units a greedy pattern could split many ways, and openings never closed. */
const ANSWERS: Record<string, string> = {
  spaces: fill(' ') + 'x',
  'quoted list, never closed': `Missing: [${fill("'a'  ")}x`,
  'quoted list, closed then more': `Missing: [${fill("'a' , ")}]x`,
  brackets: fill('['),
  'JSON openings': fill('{"a":['),
  'tags never closed': fill('<a b="'),
  'close tags never finished': fill('</variable '),
  'entities never finished': fill('&#x1'),
  fences: fill('```xml\n'),
  quotes: fill('"\\'),
  'lines of words': fill('word word.\n'),
  digits: fill('1.') + 'x',
  'camel case': fill('aB'),
  percents: fill('%a_'),
  'error lines': fill('    KeyError: x\n')
};

const BOUND_MS = 2000;

function timed(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

async function timedAsync(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

const request: PlanningRequestInput = {
  observation: {
    location: { current: { stage_id: 's', step_id: 't' } },
    context: { variables: { user_goal: 'g' } }
  }
};

describe.each(Object.entries(ANSWERS))(
  'a 10 kB adversarial answer (%s)',
  (_, answer) => {
    it('is read to its end by every text parser', () => {
      const parsers: Record<string, () => unknown> = {
        'actionStream line parser': () => {
          const parser = new ActionLineParser('POST x');
          return [...parser.line(answer), ...parser.end()];
        },
        'actionStream splitter': () => {
          const splitter = new NdjsonLineSplitter();
          return [
            ...splitter.pushItems(new TextEncoder().encode(answer)),
            ...splitter.flushItems()
          ];
        },
        'actionStream message': () =>
          actionsInMessage({ type: answer, error: answer }),
        'normalize action': () => [
          normalizeAction({
            action: 'add',
            shot_type: answer,
            content: answer
          }),
          normalizeAction({ action: 'exec', codecell_id: answer }),
          normalizeAction({ type: answer })
        ],
        'normalize template': () =>
          normalizeWorkflowTemplate({
            stages: [{ id: answer, title: answer, steps: [{ id: answer }] }]
          }),
        'normalize response': () =>
          normalizePlanningResponse({
            targetAchieved: answer,
            transition: { continue_behaviors: answer, next_step_id: answer },
            context_update: { variables: { a: answer } }
          }),
        'code fence': () => unwrapCodeFence(answer),
        excerpt: () => excerpt(answer),
        'Retry-After': () => parseRetryAfter(answer),
        xml: () => parseLenientXml(answer),
        'bcc answers': () => {
          const { roots } = parseLenientXml(
            `<workflow><stages>${answer}</stages></workflow><reflection>${answer}</reflection>`
          );
          return [
            ...roots.map(root => planningAnswerFromXml(root)),
            ...roots.map(root => reflectionFromXml(root)),
            planningAnswerFromJson({ stages: [{ id: answer, title: answer }] }),
            reflectionFromNdjson([{ reflection: answer }, answer])
          ];
        },
        'dialect helpers': () => [
          unquotedBody(answer),
          looksLikeXml('text/plain', answer),
          parseJson(answer),
          isRouteMissingBody(404, answer),
          detailOf(answer)
        ],
        'v1 state': () => [
          missingVariableNames(answer),
          problemName(answer),
          describeData({ data_files: ['a.csv'], frame: `DataFrame(${answer}` })
        ]
      };
      for (const [name, parse] of Object.entries(parsers)) {
        expect([name, timed(parse) < BOUND_MS]).toEqual([name, true]);
      }
    });

    it('is read to its end by the stream, the dialect detection and the adapters', async () => {
      const chunks = async function* () {
        yield new TextEncoder().encode(`${answer}\n${answer}`);
      };
      const runs: Record<string, () => Promise<unknown>> = {
        'action events': () => collect(actionEvents(chunks(), 'POST x')),
        detection: () =>
          detectDialect({
            transport: new FakeTransport(() => text(answer)),
            request
          }).catch(error => error),
        'bcc planning': () =>
          new BccAdapter({
            transport: new FakeTransport(() =>
              text(`<stages>${answer}</stages>`, 200, 'application/xml')
            )
          })
            .planning(request)
            .catch(error => error),
        'v1 generating': async () => {
          const line = JSON.stringify({
            action: {
              action: 'add',
              shotType: 'dialogue',
              content: answer,
              state: { variables: {}, toDoList: [], effect: { current: [] } }
            }
          });
          const service = new V1Adapter({
            transport: new FakeTransport(() => text(`${line}\n${answer}\n`))
          });
          await service.planning(request);
          return collect(service.generating(request)).catch(error => error);
        }
      };
      for (const [name, run] of Object.entries(runs)) {
        expect([name, (await timedAsync(run)) < BOUND_MS]).toEqual([
          name,
          true
        ]);
      }
    }, 30_000);
  }
);
