/**
 * The planner line of the panel and the token usage and cost of a run, in the user's language.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { PlanningUsage, TokenUsage } from '../protocol';
import type { IMessage } from '../engine/messages';
import { translateVia } from './present';
/**
 * The planner line of the panel: its dialect once known, and where requests go. `model`: the model the
 * LLM planner said it ran (its `usage`), else its default model is named.
 */
export function describePlanner(
  dialect: string | null,
  location: {
    via: string;
    viaText?: IMessage;
    url?: string;
    source?: string;
    builtin?: boolean;
    llm?: { model: string };
  } | null,
  trans: TranslationBundle,
  model?: string
): { dialect: string; where: string | null } {
  // The documented protocol goes without saying; a v1 or bcc server is what its user chose.
  const name =
    dialect && dialect !== 'dslc'
      ? trans.__('Planner: %1 dialect', dialect)
      : trans.__('Planner');
  if (!location) {
    return { dialect: name, where: null };
  }
  if (location.llm) {
    return {
      dialect: trans.__('LLM planner: %1', model || location.llm.model),
      where: null
    };
  }
  if (location.builtin) {
    return {
      dialect: trans.__('Built-in demo planner'),
      where: trans.__(
        "A fixed pandas analysis. Set your planner's URL in Settings > Notebook-BCC."
      )
    };
  }
  if (!location.url) {
    return { dialect: name, where: translateVia(location, trans) };
  }
  switch (location.source) {
    case 'server':
    case 'overrides':
      return {
        dialect: name,
        where: trans.__(
          '%1 (set by your administrator), through the Jupyter server',
          location.url
        )
      };
    case 'default':
      return {
        dialect: name,
        where: trans.__(
          '%1 (the default URL), through the Jupyter server',
          location.url
        )
      };
    default:
      return {
        dialect: name,
        where: trans.__('%1, through the Jupyter server', location.url)
      };
  }
}

/** `5120` -> `5,120`: the same in every language the panel speaks. */
function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** `0.0123` -> `0.0123 USD`; a tiny cost keeps its first digits. */
function formatCost(cost: number, currency: string | undefined): string {
  const amount = cost.toLocaleString('en-US', {
    maximumFractionDigits: cost > 0 && cost < 0.01 ? 6 : 4
  });
  return currency ? `${amount} ${currency}` : amount;
}

/** The token line of an LLM planner's run: the last behavior's tokens, the run's, and their cost. */
export function describeUsage(
  usage: PlanningUsage,
  trans: TranslationBundle
): {
  behavior: string | null;
  run: string | null;
  cost: string | null;
  /** The model sent no token counts: the planner estimated them from the text. */
  estimated: string | null;
} {
  // Nothing is said of tokens before any was spent: "0 prompt + 0 completion tokens" says nothing.
  const tokens = (counts: TokenUsage | undefined) =>
    counts &&
    ((counts.prompt_tokens ?? 0) > 0 || (counts.completion_tokens ?? 0) > 0)
      ? {
          prompt: formatCount(counts.prompt_tokens ?? 0),
          completion: formatCount(counts.completion_tokens ?? 0)
        }
      : null;
  const behavior = tokens(usage.behavior);
  const run = tokens(usage.run);
  const calls = usage.run?.model_calls;
  // The LLM planner's `estimated` (not in the schema: a loose field it adds).
  const isEstimated = [usage.behavior, usage.run].some(
    counts =>
      (counts as { estimated?: unknown } | undefined)?.estimated === true
  );
  const cost = usage.cost;
  return {
    behavior: behavior
      ? trans.__(
          'Last behavior: %1 prompt + %2 completion tokens',
          behavior.prompt,
          behavior.completion
        )
      : null,
    run: run
      ? calls !== undefined
        ? trans._n(
            'Run: %2 prompt + %3 completion tokens in %1 model call',
            'Run: %2 prompt + %3 completion tokens in %1 model calls',
            calls,
            run.prompt,
            run.completion
          )
        : trans.__(
            'Run: %1 prompt + %2 completion tokens',
            run.prompt,
            run.completion
          )
      : null,
    cost:
      cost?.run !== undefined && (run || cost.run > 0)
        ? cost.behavior !== undefined
          ? trans.__(
              'Cost: %1 (last behavior %2)',
              formatCost(cost.run, cost.currency),
              formatCost(cost.behavior, cost.currency)
            )
          : trans.__('Cost: %1', formatCost(cost.run, cost.currency))
        : null,
    estimated: isEstimated && (behavior || run) ? trans.__('(estimated)') : null
  };
}
