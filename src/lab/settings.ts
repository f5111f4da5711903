/**
 * The user's settings as the engine reads them. JupyterLab's composite settings are mapped onto
 * `IRunSettings` on every change, and runners read `current` through a getter, so a change applies to
 * the next request without a reload. And the settings' schema in the user's language.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';
import {
  DEFAULT_SETTINGS,
  IRunSettings,
  toRunSettings
} from '../engine/settings';
import { type IApprovalPolicy, withApprovalPolicy } from './approvalPolicy';

export { toRunSettings };

/**
 * The current run settings, replaced whenever the user changes a setting or the server's approval
 * policy changes (`approvalPolicy.ts`: interactive mode may be required).
 */
export class RunSettingsModel {
  /** What runs use: the user's settings under the approval policy. */
  get current(): IRunSettings {
    return this._current;
  }

  /** The settings as JupyterLab holds them: the planner connection reads the dialect settings from them. */
  get composite(): ReadonlyPartialJSONObject {
    return this._composite;
  }

  get changed(): ISignal<this, IRunSettings> {
    return this._changed;
  }

  update(composite: ReadonlyPartialJSONObject): void {
    this._composite = composite;
    this._own = toRunSettings(composite);
    this._apply();
  }

  /** The server's approval policy, once it answered. */
  setPolicy(policy: IApprovalPolicy | null): void {
    this._policy = policy;
    this._apply();
  }

  private _apply(): void {
    this._current = withApprovalPolicy(this._own, this._policy);
    this._changed.emit(this._current);
  }

  private _composite: ReadonlyPartialJSONObject = {};
  private _own: IRunSettings = { ...DEFAULT_SETTINGS };
  private _policy: IApprovalPolicy | null = null;
  private _current: IRunSettings = { ...DEFAULT_SETTINGS };
  private _changed = new Signal<this, IRunSettings>(this);
}

/**
 * The plugin with its schema's titles and descriptions (its own and each setting's) translated: the
 * setting registry's `fetch` transform (`"jupyter.lab.transform": true` in `schema/plugin.json`), since
 * jupyterlab_server translates schemas only from the language packs' own catalogues
 * (docs/translations.md#settings). Everything else (types, defaults, bounds) is kept as it is.
 */
export function translateSchema(
  plugin: ISettingRegistry.IPlugin,
  trans: TranslationBundle
): ISettingRegistry.IPlugin {
  const translated = <T extends ISettingRegistry.IProperty>(node: T): T => ({
    ...node,
    ...(node.title ? { title: trans.__(node.title) } : {}),
    ...(node.description ? { description: trans.__(node.description) } : {}),
    // An option's label (`oneOf: [{ const, title }]`) and an array item's title are words too.
    ...(Array.isArray(node.oneOf)
      ? {
          oneOf: (node.oneOf as ISettingRegistry.IProperty[]).map(option =>
            translated(option)
          )
        }
      : {}),
    ...(node.items &&
    typeof node.items === 'object' &&
    !Array.isArray(node.items)
      ? { items: translated(node.items as ISettingRegistry.IProperty) }
      : {})
  });
  const properties = Object.fromEntries(
    Object.entries(plugin.schema.properties ?? {}).map(([key, property]) => [
      key,
      translated(property)
    ])
  );
  return { ...plugin, schema: { ...translated(plugin.schema), properties } };
}
