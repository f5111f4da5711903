/** Types of `scripts/translations.js` for the tests that call it. */
export interface ICatalogueFiles {
  language: string;
  po: string;
  json: string;
}

export interface IExtracted {
  key: string;
  msgid: string;
  plural?: string;
  context?: string;
  files: Set<string>;
}

export interface IPoEntry {
  key: string;
  msgid: string;
  plural?: string;
  context?: string;
  msgstr: string[];
}

export interface IPo {
  header: Record<string, string>;
  entries: IPoEntry[];
}

export function extract(srcDir?: string): {
  entries: IExtracted[];
  problems: string[];
};
export function parsePo(text: string, file: string): IPo;
export function formatPo(
  language: string,
  header: Record<string, string>,
  entries: (IPoEntry | (IExtracted & { msgstr: string[] }))[]
): string;
export function compilePo(po: IPo, language: string): string;
export function check(options?: {
  srcDir?: string;
  localeFiles?: ICatalogueFiles[];
}): string[];
export function catalogues(): ICatalogueFiles[];
