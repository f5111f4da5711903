/**
 * Names the default redaction patterns hide and pass: the engine's test and the kernel's (Python, in
 * `notebook/kernelCode.ts`) are both checked against this one table.
 */
export const HIDDEN_BY_DEFAULT = [
  'api_key',
  'apiKey',
  'OPENAI_API_KEY',
  'token',
  'auth_token',
  'access_token',
  'github_Token2',
  'db_password',
  'DB_PASSWORD',
  'passwd',
  'secret',
  'mySecret',
  'client_secret',
  'aws_secret_access_key',
  'private_key',
  'secretKey'
];

export const SENT_BY_DEFAULT = [
  'label',
  'count',
  'k',
  'monthly_totals',
  'tokens',
  'tokenizer',
  'token_ids',
  'keywords',
  'monkey_df',
  'primary_key',
  'foreign_key',
  'key',
  'hotkey'
];

/** Patterns of the user's own, with the names each hides (true) or passes (false). */
export const CUSTOM_PATTERNS = ['pwd', '*_pin', 'pass*', 'x*y', '(a+)+'];
export const CUSTOM_CASES: [string, boolean][] = [
  ['pwd', true],
  ['PWD2', true],
  ['db_pwd', false],
  ['pin', true],
  ['cardPin', true],
  ['pin_count', false],
  ['passphrase', true],
  ['bypass', false],
  ['xay', true],
  ['x_y', false],
  ['a', true]
];
