/**
 * The LLM Planner Settings dialog: the base URL, model and API key of the model the LLM planner uses,
 * stored on the Jupyter server (never in the browser). The key is sent, never shown: the dialog only
 * knows whether one is stored. Read-only when the administrator configured the LLM planner.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';
/** What the server holds (`GET notebook-bcc/llm/settings`); never the key itself. */
export interface ILlmSettings {
  /** `server`: the administrator's; `user`: the user's own stored settings; `none`: not configured. */
  source: 'server' | 'user' | 'none';
  /** The administrator configured it: the user cannot change it. */
  readonly: boolean;
  base_url: string;
  model: string;
  models: string[];
  /** A key is stored (it is never sent back). */
  api_key_set: boolean;
}

/**
 * What Save stores. `api_key` absent (or null): keep the stored key; `''`: remove it. `models`, when
 * given, are the models a run may pick.
 */
export interface ILlmSettingsUpdate {
  base_url: string;
  model: string;
  models?: string[];
  api_key?: string | null;
}

/** What Test tries; an absent field: the stored (or the administrator's) value. */
export interface ILlmTestRequest {
  base_url?: string;
  model?: string;
  api_key?: string;
}

export interface ILlmTestResult {
  ok: boolean;
  /** The server's sentence, in English (e.g. "The model gemma answers at http://…"). */
  message: string;
  /** The model that answered, when the server could tell. */
  model?: string;
  /** The models the endpoint lists (`GET /models`), when it lists any. */
  models?: string[];
  /** Whether the endpoint lists the model named; absent when it lists none. */
  served?: boolean;
}

/** What the dialog needs of the server (`lab/llmSettings.ts`'s `LlmSettingsService`). */
export interface ILlmSettingsBackend {
  get(): Promise<ILlmSettings>;
  save(update: ILlmSettingsUpdate): Promise<ILlmSettings>;
  remove(): Promise<void>;
  test(request: ILlmTestRequest): Promise<ILlmTestResult>;
}

/** The fields as the user typed them. */
export interface ILlmSettingsForm {
  baseUrl: string;
  model: string;
  /** Comma-separated. */
  models: string;
  /** Empty: keep the stored key. */
  apiKey: string;
  /** Remove the stored key (when none is typed). */
  removeKey: boolean;
}

/** `"a, b ,,c"` -> `['a', 'b', 'c']`, each name once. */
function modelList(list: string): string[] {
  return [
    ...new Set(
      list
        .split(',')
        .map(name => name.trim())
        .filter(name => name)
    )
  ];
}

/** What Save sends: an empty key field keeps the stored key, unless its removal was asked. */
export function updateFrom(form: ILlmSettingsForm): ILlmSettingsUpdate {
  const model = form.model.trim();
  const others = modelList(form.models).filter(name => name !== model);
  const apiKey = form.apiKey.trim();
  return {
    base_url: form.baseUrl.trim(),
    model,
    // The default model first: a run may always pick it.
    ...(others.length > 0 ? { models: [model, ...others] } : {}),
    ...(apiKey ? { api_key: apiKey } : form.removeKey ? { api_key: '' } : {})
  };
}

/** What Test sends: the fields typed; the server uses the stored values for the others. */
export function testRequestFrom(
  form: ILlmSettingsForm,
  readonly: boolean
): ILlmTestRequest {
  if (readonly) {
    return {};
  }
  const request: ILlmTestRequest = {};
  if (form.baseUrl.trim()) {
    request.base_url = form.baseUrl.trim();
  }
  if (form.model.trim()) {
    request.model = form.model.trim();
  }
  if (form.apiKey.trim()) {
    request.api_key = form.apiKey.trim();
  } else if (form.removeKey) {
    request.api_key = '';
  }
  return request;
}

function formOf(settings: ILlmSettings): ILlmSettingsForm {
  return {
    baseUrl: settings.base_url,
    model: settings.model,
    models: settings.models.filter(m => m !== settings.model).join(', '),
    apiKey: '',
    removeKey: false
  };
}

interface ITestState {
  running: boolean;
  result: ILlmTestResult | null;
}

export interface ILlmSettingsViewProps {
  settings: ILlmSettings;
  form: ILlmSettingsForm;
  /** Why the last Save or Remove failed. */
  error: string | null;
  onChange: (form: ILlmSettingsForm) => void;
  test: (request: ILlmTestRequest) => Promise<ILlmTestResult>;
  trans: TranslationBundle;
}

/**
 * Which model answered the Test and which the endpoint serves; when it serves another than the one named
 * (llama.cpp answers under any name), a button that takes the one that answered.
 */
function LlmTestModel(props: {
  result: ILlmTestResult;
  onUseModel: (model: string) => void;
  trans: TranslationBundle;
}): JSX.Element | null {
  const { result, trans } = props;
  if (!result.model && !result.models?.length) {
    return null;
  }
  const parts: string[] = [];
  if (result.model) {
    parts.push(trans.__('Answered by: %1.', result.model));
  }
  if (result.models?.length) {
    parts.push(trans.__('The endpoint serves: %1.', result.models.join(', ')));
  }
  return (
    <div className="jp-bcc-llm-test-models">
      <span className="jp-bcc-hint jp-bcc-llm-test-model">
        {parts.join(' ')}
      </span>
      {result.served === false && result.model ? (
        <button
          type="button"
          className="jp-Button jp-mod-styled jp-bcc-llm-use-model"
          onClick={() => props.onUseModel(result.model ?? '')}
        >
          {trans.__('Use %1', result.model)}
        </button>
      ) : null}
    </div>
  );
}

/** The Test button and the model's answer: a request with the settings as typed; nothing is saved. */
function LlmTestRow(props: {
  request: () => ILlmTestRequest;
  test: (request: ILlmTestRequest) => Promise<ILlmTestResult>;
  onUseModel: (model: string) => void;
  trans: TranslationBundle;
}): JSX.Element {
  const { trans } = props;
  const [test, setTest] = React.useState<ITestState>({
    running: false,
    result: null
  });
  const mounted = React.useRef(true);
  React.useEffect(
    () => () => {
      mounted.current = false;
    },
    []
  );
  const runTest = async () => {
    setTest({ running: true, result: null });
    let result: ILlmTestResult;
    try {
      result = await props.test(props.request());
    } catch (reason) {
      result = {
        ok: false,
        message: reason instanceof Error ? reason.message : String(reason)
      };
    }
    if (mounted.current) {
      setTest({ running: false, result });
    }
  };
  return (
    <>
      <div className="jp-bcc-llm-test-row">
        <button
          type="button"
          className="jp-Button jp-mod-styled jp-bcc-llm-test"
          disabled={test.running}
          title={trans.__(
            'Ask the model a short question with these settings; nothing is saved'
          )}
          onClick={() => {
            void runTest();
          }}
        >
          {trans.__('Test')}
        </button>
        <span
          className={`jp-bcc-llm-test-result${
            // Not jp-mod-error: a JupyterLab dialog disables its Save button while one is inside it.
            test.result
              ? test.result.ok
                ? ' jp-mod-ok'
                : ' jp-mod-failed'
              : ''
          }`}
          role="status"
          aria-live="polite"
          data-ok={test.result ? String(test.result.ok) : undefined}
        >
          {test.running
            ? trans.__('Testing…')
            : test.result
              ? test.result.message ||
                (test.result.ok
                  ? trans.__('The model answers.')
                  : trans.__('The model does not answer.'))
              : ''}
        </span>
      </div>
      {test.result && !test.running ? (
        <LlmTestModel
          result={test.result}
          onUseModel={props.onUseModel}
          trans={trans}
        />
      ) : null}
    </>
  );
}

/** The fields, who set them, and the Test button with its answer. */
export function LlmSettingsView(props: ILlmSettingsViewProps): JSX.Element {
  const { settings, trans } = props;
  const readonly = settings.readonly;
  const [form, setForm] = React.useState(props.form);
  const change = (part: Partial<ILlmSettingsForm>) => {
    const next = { ...form, ...part };
    setForm(next);
    props.onChange(next);
  };
  const id = React.useId();
  const source =
    settings.source === 'server'
      ? trans.__(
          'Your administrator set the LLM planner: these settings cannot be changed here.'
        )
      : settings.source === 'user'
        ? trans.__(
            'Your own settings, kept on the Jupyter server for your account only.'
          )
        : trans.__(
            'No model is set: the demo planner answers. Any OpenAI-compatible endpoint works: OpenAI, Azure OpenAI, DeepSeek, Qwen, vLLM, Ollama, llama.cpp.'
          );
  return (
    <div className="jp-bcc-llm-settings" data-source={settings.source}>
      <p className="jp-bcc-hint jp-bcc-llm-source">{source}</p>
      <label className="jp-bcc-field-label" htmlFor={`${id}-url`}>
        {trans.__('Base URL')}
      </label>
      <input
        id={`${id}-url`}
        className="jp-mod-styled jp-bcc-llm-base-url"
        type="text"
        value={form.baseUrl}
        disabled={readonly}
        placeholder="http://localhost:8080/v1"
        spellCheck={false}
        onChange={event => change({ baseUrl: event.target.value })}
      />
      <label className="jp-bcc-field-label" htmlFor={`${id}-model`}>
        {trans.__('Model')}
      </label>
      <input
        id={`${id}-model`}
        className="jp-mod-styled jp-bcc-llm-model-name"
        type="text"
        value={form.model}
        disabled={readonly}
        placeholder={trans.__('e.g. gpt-4o-mini')}
        spellCheck={false}
        onChange={event => change({ model: event.target.value })}
      />
      <label className="jp-bcc-field-label" htmlFor={`${id}-models`}>
        {trans.__('Other models a run may pick (optional, comma-separated)')}
      </label>
      <input
        id={`${id}-models`}
        className="jp-mod-styled jp-bcc-llm-models"
        type="text"
        value={form.models}
        disabled={readonly}
        spellCheck={false}
        onChange={event => change({ models: event.target.value })}
      />
      <label className="jp-bcc-field-label" htmlFor={`${id}-key`}>
        {trans.__('API key')}
      </label>
      <input
        id={`${id}-key`}
        className="jp-mod-styled jp-bcc-llm-api-key"
        type="password"
        autoComplete="new-password"
        value={form.apiKey}
        disabled={readonly || form.removeKey}
        placeholder={
          settings.api_key_set
            ? trans.__('A key is stored: leave empty to keep it')
            : trans.__('None stored (a local server may need none)')
        }
        onChange={event => change({ apiKey: event.target.value })}
      />
      <p
        className="jp-bcc-hint jp-bcc-llm-key-status"
        data-key-set={settings.api_key_set}
      >
        {settings.api_key_set
          ? trans.__(
              'A key is stored on the server. It is never sent back to the browser.'
            )
          : trans.__('No key is stored.')}
      </p>
      {settings.api_key_set && !readonly ? (
        <label className="jp-bcc-checkbox">
          <input
            type="checkbox"
            className="jp-bcc-llm-remove-key"
            checked={form.removeKey}
            onChange={event => change({ removeKey: event.target.checked })}
          />{' '}
          {trans.__('Remove the stored key')}
        </label>
      ) : null}
      <LlmTestRow
        request={() => testRequestFrom(form, readonly)}
        test={props.test}
        onUseModel={model => {
          if (!readonly) {
            change({ model });
          }
        }}
        trans={trans}
      />
      {props.error ? (
        <p className="jp-bcc-field-error jp-bcc-llm-error" role="alert">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** The dialog's body: the view, and the form it keeps for the buttons. */
class LlmSettingsBody
  extends ReactWidget
  implements Dialog.IBodyWidget<ILlmSettingsForm>
{
  constructor(
    private _props: Omit<ILlmSettingsViewProps, 'onChange'>,
    private _form: ILlmSettingsForm
  ) {
    super();
    this.addClass('jp-bcc-llm-settings-dialog');
  }

  getValue(): ILlmSettingsForm {
    return this._form;
  }

  protected render(): JSX.Element {
    return (
      <LlmSettingsView
        {...this._props}
        form={this._form}
        onChange={form => (this._form = form)}
      />
    );
  }
}

function errorText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

/**
 * Shows the LLM planner's settings; Save stores them, Remove deletes the user's own. Stays open (with
 * what was typed) while the server refuses them. Resolves with what was done, null when nothing was.
 */
export async function showLlmSettingsDialog(
  backend: ILlmSettingsBackend,
  trans: TranslationBundle
): Promise<'saved' | 'removed' | null> {
  let settings: ILlmSettings;
  try {
    settings = await backend.get();
  } catch (reason) {
    await showDialog({
      title: trans.__('LLM Planner Settings'),
      body: trans.__(
        'The LLM planner settings could not be read from the Jupyter server: %1',
        errorText(reason)
      ),
      buttons: [Dialog.okButton({ label: trans.__('Close') })]
    });
    return null;
  }
  let form = formOf(settings);
  let error: string | null = null;
  for (;;) {
    const body = new LlmSettingsBody(
      { settings, form, error, test: request => backend.test(request), trans },
      form
    );
    const buttons = settings.readonly
      ? [Dialog.okButton({ label: trans.__('Close') })]
      : [
          Dialog.cancelButton({ label: trans.__('Cancel') }),
          ...(settings.source === 'user'
            ? [
                Dialog.warnButton({
                  label: trans.__('Remove'),
                  caption: trans.__(
                    'Remove your LLM settings from the server: the demo planner answers again'
                  ),
                  actions: ['remove']
                })
              ]
            : []),
          Dialog.okButton({
            label: trans.__('Save'),
            actions: ['save']
          })
        ];
    const result = await showDialog({
      title: trans.__('LLM Planner Settings'),
      body,
      buttons,
      focusNodeSelector: settings.readonly
        ? '.jp-bcc-llm-test'
        : '.jp-bcc-llm-base-url',
      defaultButton: buttons.length - 1
    });
    if (settings.readonly || !result.button.accept) {
      return null;
    }
    form = result.value ?? form;
    if (result.button.actions.includes('remove')) {
      try {
        await backend.remove();
        Notification.success(
          trans.__('Your LLM planner settings were removed.'),
          {
            autoClose: 5000
          }
        );
        return 'removed';
      } catch (reason) {
        error = trans.__('Remove failed: %1', errorText(reason));
        continue;
      }
    }
    const update = updateFrom(form);
    if (!update.base_url || !update.model) {
      error = trans.__('Give the base URL and the model.');
      continue;
    }
    try {
      settings = await backend.save(update);
      Notification.success(
        trans.__(
          'The LLM planner now uses %1.',
          settings.model || update.model
        ),
        { autoClose: 5000 }
      );
      return 'saved';
    } catch (reason) {
      error = trans.__('Save failed: %1', errorText(reason));
    }
  }
}
