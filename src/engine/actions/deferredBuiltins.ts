/**
 * The built-in action types, registered before their handlers are loaded (docs/architecture.md#lazy-loading):
 * each type's entry is a stand-in that loads the handlers (`builtins.ts`) on its first call. The registry
 * behind the extension's token names every built-in type from startup, in the order a full registration
 * gives (an extension's own handler registered later still takes over), without the handlers' code.
 */
import { ACTION_TYPES } from '../../protocol/actionTypes';
import type { ActionOf } from '../../protocol';
import type { BuiltinHandlers } from './builtins';
import {
  type ActionHandler,
  type ActionRegistry,
  disposeTogether,
  type IDisposableLike
} from './registry';

export function registerDeferredBuiltins(
  registry: ActionRegistry,
  load: () => Promise<BuiltinHandlers>
): IDisposableLike {
  return disposeTogether(
    ACTION_TYPES.map(type => {
      const handler: ActionHandler<ActionOf<typeof type>> = async (
        action,
        context
      ) => {
        const handlers = await load();
        return (handlers[type] as ActionHandler<ActionOf<typeof type>>)(
          action,
          context
        );
      };
      return registry.register(type, handler);
    })
  );
}
