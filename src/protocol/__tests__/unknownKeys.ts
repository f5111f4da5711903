import { z } from 'zod';

/** The parts of zod's internal definition this walker needs. */
type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
};

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Paths (`a.b.c`, array indexes left out) of the keys in `value` that `schema` does not declare.
 * The schemas are loose, so parsing alone would not notice a fixture that strays from them.
 */
export function unknownKeys(
  schema: z.ZodType,
  value: unknown,
  path = ''
): string[] {
  const def = defOf(schema);
  const join = (key: string) => (path ? `${path}.${key}` : key);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return def.innerType ? unknownKeys(def.innerType, value, path) : [];
    case 'pipe':
      return def.in ? unknownKeys(def.in, value, path) : [];
    case 'array':
      return Array.isArray(value) && def.element
        ? value.flatMap(item =>
            unknownKeys(def.element as z.ZodType, item, path)
          )
        : [];
    case 'record':
      return isObject(value) && def.valueType
        ? Object.entries(value).flatMap(([key, item]) =>
            unknownKeys(def.valueType as z.ZodType, item, join(key))
          )
        : [];
    case 'union': {
      const matching = (def.options ?? []).filter(
        option => option.safeParse(value).success
      );
      const candidates = matching.map(option =>
        unknownKeys(option, value, path)
      );
      candidates.sort((a, b) => a.length - b.length);
      return candidates[0] ?? [];
    }
    case 'object': {
      if (!isObject(value) || !def.shape) {
        return [];
      }
      const shape = def.shape;
      return Object.entries(value).flatMap(([key, item]) =>
        key in shape ? unknownKeys(shape[key], item, join(key)) : [join(key)]
      );
    }
    default:
      return [];
  }
}
