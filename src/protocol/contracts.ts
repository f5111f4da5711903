/**
 * Output contracts (our extension, docs/protocol.md#output-contracts): what a step's variables and the
 * run's deliverables must be, as a planner states them, and what the extension's check in the kernel
 * found. A contract is data, never code: the checks are the extension's own (`src/notebook/`). Be
 * liberal: a contract that cannot be read is dropped with a warning, the others are kept.
 */
import { z } from 'zod';
import {
  alias,
  describeValue,
  isRecord,
  type JsonObject,
  snakeKeys
} from './fields';

export const CONTRACT_KINDS = [
  'number',
  'integer',
  'label',
  'text',
  'bool',
  'series',
  'dataframe',
  'dict',
  'list',
  'any'
] as const;
export const ContractKindSchema = z.enum(CONTRACT_KINDS);
export type ContractKind = z.infer<typeof ContractKindSchema>;

/** The DataFrame that `of_column` and `index` refer to when a contract names none. */
export const DEFAULT_CONTRACT_FRAME = 'df';

/** What one variable must be. */
export const OutputContractSchema = z.looseObject({
  /** A Python identifier. */
  name: z.string().regex(/^[\p{L}_][\p{L}\p{N}_]*$/u),
  kind: ContractKindSchema.default('any'),
  /** label: the value must be one of the values of `frame[of_column]`. */
  of_column: z.string().optional(),
  /** The DataFrame `of_column` and `index` refer to (default `df`). */
  frame: z.string().optional(),
  /** series: its index is named so, or its labels are values of `frame[index]`. */
  index: z.string().optional(),
  /** dataframe: has at least these columns. */
  columns: z.array(z.string()).optional(),
  /** dict: has at least these keys. */
  keys: z.array(z.string()).optional(),
  /** number: rounded to at most this many decimals. */
  decimals: z.number().int().min(0).max(15).optional(),
  /** text, label: the value is exactly one of these (the task's own spelling). */
  one_of: z.array(z.string()).min(1).max(20).optional(),
  /** Words for the panel, in the task's language. */
  describe: z.string().optional()
});
export type OutputContract = z.infer<typeof OutputContractSchema>;

/** The run's contract: the task's deliverables (`context_update.contract`). */
export const RunContractSchema = z.looseObject({
  deliverables: z.array(OutputContractSchema),
  /** `Deliver: \`answer\`, a region name`: the extension writes one from the deliverables when absent. */
  summary: z.string().optional(),
  /** `@name[value]`: informative. */
  answer_format: z.string().optional()
});
export type RunContract = z.infer<typeof RunContractSchema>;

/** What the check in the kernel found for one name (`observation.context.output_checks`). */
export const OutputCheckSchema = z.looseObject({
  ok: z.boolean(),
  kind: ContractKindSchema,
  /** `int`, `str`, `Series(4)`, `DataFrame(240×4)`; null when the name is missing. */
  type: z.string().nullable(),
  /** A short repr of a scalar, a label or a text (a dict's keys as JSON); null otherwise, and when hidden. */
  value: z.string().nullable(),
  /** One English sentence, only when `ok` is false. */
  reason: z.string().optional()
});
export type OutputCheck = z.infer<typeof OutputCheckSchema>;

/** Spellings of a kind a planner may send, and the kind they mean. */
const KIND_ALIASES: Record<string, ContractKind> = {
  float: 'number',
  numeric: 'number',
  scalar_number: 'number',
  int: 'integer',
  count: 'integer',
  str: 'text',
  string: 'text',
  boolean: 'bool',
  category: 'label',
  categorical: 'label',
  pd_series: 'series',
  pandas_series: 'series',
  data_frame: 'dataframe',
  frame: 'dataframe',
  table: 'dataframe',
  mapping: 'dict',
  object: 'dict',
  array: 'list',
  tuple: 'list',
  sequence: 'list'
};

function kindOf(raw: unknown): ContractKind | null {
  if (raw === undefined) {
    return 'any';
  }
  if (typeof raw !== 'string') {
    return null;
  }
  const key = raw
    .trim()
    .toLowerCase()
    .replace(/[\s.-]+/g, '_');
  const known = (CONTRACT_KINDS as readonly string[]).includes(key);
  return known ? (key as ContractKind) : (KIND_ALIASES[key] ?? null);
}

function stringList(value: unknown): unknown {
  if (typeof value === 'string') {
    return [value];
  }
  return Array.isArray(value)
    ? value.map(item => (typeof item === 'number' ? String(item) : item))
    : value;
}

/**
 * One contract as a planner sent it -> the canonical form, or null (with a warning) when it cannot be
 * read. A bare name is a contract of kind `any`; an unknown kind is read as `any`, with a warning.
 */
export function normalizeContract(
  raw: unknown,
  where: string,
  warnings: string[]
): OutputContract | null {
  const given = typeof raw === 'string' ? { name: raw } : raw;
  if (!isRecord(given)) {
    warnings.push(
      `${where} ignored: expected a contract object, got ${describeValue(given)}`
    );
    return null;
  }
  const contract: JsonObject = snakeKeys(given);
  alias(contract, 'name', ['variable_name', 'variable']);
  alias(contract, 'kind', ['type']);
  alias(contract, 'of_column', ['column']);
  alias(contract, 'describe', ['description']);
  for (const key of ['columns', 'keys']) {
    if (key in contract) {
      contract[key] = stringList(contract[key]);
    }
  }
  if (typeof contract.decimals === 'string' && contract.decimals.trim()) {
    contract.decimals = Number(contract.decimals);
  }
  const kind = kindOf(contract.kind);
  if (kind === null) {
    warnings.push(
      `${where}.kind ${JSON.stringify(contract.kind)} is not a kind of contract; read as "any"`
    );
  }
  contract.kind = kind ?? 'any';
  const parsed = OutputContractSchema.safeParse(contract);
  if (!parsed.success) {
    const name = typeof contract.name === 'string' ? ` (${contract.name})` : '';
    const problems = parsed.error.issues
      .map(issue => `${issue.path.join('.') || 'contract'}: ${issue.message}`)
      .join('; ');
    warnings.push(`${where}${name} ignored: ${problems}`);
    return null;
  }
  return parsed.data;
}

/** A list of contracts; what cannot be read is dropped with a warning. A later contract of a name wins. */
export function normalizeContracts(
  raw: unknown,
  where: string,
  warnings: string[]
): OutputContract[] {
  const list = Array.isArray(raw) ? raw : [raw];
  const byName = new Map<string, OutputContract>();
  list.forEach((item, index) => {
    const contract = normalizeContract(
      item,
      Array.isArray(raw) ? `${where}[${index}]` : where,
      warnings
    );
    if (contract) {
      byName.delete(contract.name);
      byName.set(contract.name, contract);
    }
  });
  return [...byName.values()];
}

/** `context_update.contract` (a bare list is its deliverables); null, with a warning, when unreadable. */
export function normalizeRunContract(
  raw: unknown,
  warnings: string[]
): RunContract | null {
  const where = 'context_update.contract';
  const given = Array.isArray(raw) ? { deliverables: raw } : raw;
  if (!isRecord(given)) {
    warnings.push(
      `${where} ignored: expected an object, got ${describeValue(given)}`
    );
    return null;
  }
  const contract = snakeKeys(given);
  alias(contract, 'deliverables', ['outputs', 'contracts']);
  if (contract.deliverables === undefined) {
    warnings.push(`${where} ignored: it has no "deliverables"`);
    return null;
  }
  contract.deliverables = normalizeContracts(
    contract.deliverables,
    `${where}.deliverables`,
    warnings
  );
  for (const key of ['summary', 'answer_format']) {
    if (contract[key] !== undefined && typeof contract[key] !== 'string') {
      warnings.push(`${where}.${key} ignored: expected a string`);
      delete contract[key];
    }
  }
  const parsed = RunContractSchema.safeParse(contract);
  return parsed.success ? parsed.data : null;
}

/**
 * A template step's `output_contracts`, normalised in place: each name is also an expected output of
 * the step.
 */
export function normalizeStepContracts(
  step: JsonObject,
  where: string,
  warnings: string[]
): void {
  if (step.output_contracts === undefined) {
    return;
  }
  const contracts = normalizeContracts(
    step.output_contracts,
    `${where}.output_contracts`,
    warnings
  );
  step.output_contracts = contracts;
  const expected = Array.isArray(step.expected_outputs)
    ? [...(step.expected_outputs as unknown[])]
    : [];
  for (const contract of contracts) {
    if (!expected.includes(contract.name)) {
      expected.push(contract.name);
    }
  }
  if (expected.length > 0) {
    step.expected_outputs = expected;
  }
}
