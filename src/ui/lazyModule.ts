/**
 * A module that loads on first use, with `import()` (so webpack makes it a chunk of its own), for views
 * that are not needed to show the extension at startup (docs/architecture.md#lazy-loading).
 */
import * as React from 'react';

/** A module loaded once, the first time it is asked for; a failed load is tried again the next time. */
export class LazyModule<M> {
  constructor(private _import: () => Promise<M>) {}

  /** The module if it is loaded already. */
  get loaded(): M | null {
    return this._loaded;
  }

  load(): Promise<M> {
    if (!this._loading) {
      this._loading = this._import().then(
        module => (this._loaded = module),
        (reason: unknown) => {
          this._loading = null;
          throw reason;
        }
      );
    }
    return this._loading;
  }

  private _loaded: M | null = null;
  private _loading: Promise<M> | null = null;
}

/**
 * `lazy`'s module in a view: null until it is loaded, and the view renders again once it is. A failed
 * load is logged as `failure` and tried again when the view is next shown.
 */
export function useLazyModule<M>(
  lazy: LazyModule<M>,
  failure: string
): M | null {
  const [module, setModule] = React.useState<M | null>(() => lazy.loaded);
  React.useEffect(() => {
    if (module) {
      return;
    }
    let mounted = true;
    lazy.load().then(
      loaded => {
        if (mounted) {
          setModule(() => loaded);
        }
      },
      (reason: unknown) => console.error(failure, reason)
    );
    return () => {
      mounted = false;
    };
  }, [lazy, module]);
  return module;
}
