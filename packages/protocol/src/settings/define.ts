/**
 * What a settings table is, and what is derived from one: the options type, the defaults, the
 * environment schema the services check at start-up, and the options read from a checked
 * environment. Each setting is written once, as a row of its scope's table (shared.ts,
 * router.ts, registry.ts, client.ts); docs/SETTINGS.md is generated from the same rows.
 */
import { Type, type TObject, type TOptional, type TSchema } from '@sinclair/typebox';

/** What every row says, whatever its type. */
interface RowBase {
  /** The environment variable; none for an option that is set in code only. */
  readonly env?: string;
  /** One line for docs/SETTINGS.md: what it does, with its unit when the name has none. */
  readonly doc: string;
  /** The default as docs/SETTINGS.md shows it, for one computed at start-up (`sync-<pid>`). */
  readonly defaultDoc?: string;
  /**
   * registry-sync publishes it under `keys.settings()`: `followed`, and every router uses the
   * published value over its own; `listed`, for routers and tools to read.
   */
  readonly published?: 'followed' | 'listed';
  /** One of the settings a newcomer needs: in the README's short table too. */
  readonly essential?: true;
  /**
   * Read by this code rather than by the scope's options parser (the Redis connection extras,
   * the event sink, tracing): the row documents it and keeps its default; no option comes of it.
   */
  readonly readBy?: string;
  /** Earlier spellings of the variable, still read for one release with a warning. */
  readonly deprecated?: readonly string[];
}

/** A whole number. */
export interface IntegerRow extends RowBase {
  readonly type: 'integer';
  readonly default?: number;
  readonly minimum?: number;
  readonly maximum?: number;
}

/** Any number. */
export interface NumberRow extends RowBase {
  readonly type: 'number';
  readonly default?: number;
  readonly minimum?: number;
  readonly exclusiveMinimum?: number;
  readonly maximum?: number;
}

/** Text, optionally matching a pattern. */
export interface StringRow extends RowBase {
  readonly type: 'string';
  readonly default?: string;
  readonly pattern?: string;
  readonly minLength?: number;
  /** How the text is written, for docs/SETTINGS.md (`URL`, `file path`). */
  readonly format?: string;
}

/** One of a few words. */
export interface EnumRow extends RowBase {
  readonly type: 'enum';
  readonly values: readonly string[];
  readonly default?: string;
}

/** `on` or `off`, read as a boolean. */
export interface SwitchRow extends RowBase {
  readonly type: 'switch';
  readonly default?: boolean;
}

/** Text that a parser of its own turns into the value (a JSON map, a host list). */
export interface ParsedRow<T = unknown> extends RowBase {
  readonly type: 'parsed';
  /** How the value is written, for docs/SETTINGS.md. */
  readonly format: string;
  readonly default?: T;
  /** Reads the text; throws an Error naming `env` for a malformed one. */
  readonly parse: (text: string, env: string) => T;
}

/** One setting. */
export type SettingRow = IntegerRow | NumberRow | StringRow | EnumRow | SwitchRow | ParsedRow;

/** The settings of one scope, by option name. */
export type SettingsTable = Readonly<Record<string, SettingRow>>;

/** The value a row gives its option. */
export type SettingValue<R> = R extends { readonly parse: (text: string, env: string) => infer T }
  ? T
  : R extends { readonly type: 'integer' | 'number' }
    ? number
    : R extends { readonly type: 'switch' }
      ? boolean
      : R extends { readonly type: 'enum'; readonly values: readonly (infer V)[] }
        ? V
        : string;

/** The rows of `T` that are options (not documentation of a variable read elsewhere). */
type OptionName<T> = {
  [K in keyof T]: T[K] extends { readonly readBy: string } ? never : K;
}[keyof T];

/** The option rows of `T` that have a default. */
type DefaultedName<T> = {
  [K in OptionName<T>]: T[K] extends { readonly default: unknown } ? K : never;
}[OptionName<T>];

/** The option rows of `T` that registry-sync publishes (`published` set). */
export type PublishedName<T> = {
  [K in OptionName<T>]: T[K] extends { readonly published: string } ? K : never;
}[OptionName<T>];

/** The option rows of `T` that routers take from registry-sync (`published: 'followed'`). */
export type FollowedName<T> = {
  [K in OptionName<T>]: T[K] extends { readonly published: 'followed' } ? K : never;
}[OptionName<T>];

/** Flattens an intersection for readable hovers and errors. */
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The options of a table: a field per option row, required when the row has a default. */
export type OptionsOf<T> = Flat<
  { -readonly [K in DefaultedName<T>]: SettingValue<T[K]> } & {
    -readonly [K in Exclude<OptionName<T>, DefaultedName<T>>]?: SettingValue<T[K]>;
  }
>;

/** The defaults of a table: every option row that has one. */
export type DefaultsOf<T> = { -readonly [K in DefaultedName<T>]: SettingValue<T[K]> };

/** The option rows of a table. */
function optionRows(table: SettingsTable): [string, SettingRow][] {
  return Object.entries(table).filter(([, row]) => row.readBy === undefined);
}

/** Every default of `table`, arrays and objects copied, so a caller may change what it gets. */
export function defaultsOf<T extends SettingsTable>(table: T): DefaultsOf<T> {
  const out: Record<string, unknown> = {};
  for (const [name, row] of optionRows(table))
    if ('default' in row) out[name] = structuredClone(row.default);
  return out as DefaultsOf<T>;
}

/** The JSON schema of one row's variable, as env-schema checks and coerces it. */
function schemaOf(row: SettingRow): TSchema {
  switch (row.type) {
    case 'integer':
      return Type.Integer(bounds(row, ['minimum', 'maximum']));
    case 'number':
      return Type.Number(bounds(row, ['minimum', 'exclusiveMinimum', 'maximum']));
    case 'string':
      return Type.String(bounds(row, ['minLength', 'pattern']));
    case 'enum':
      return Type.Union(row.values.map((value) => Type.Literal(value)));
    case 'switch':
      return Type.Union([Type.Literal('on'), Type.Literal('off')]);
    case 'parsed':
      return Type.String();
  }
}

/** The keywords of `row` named in `keys` that it sets. */
function bounds<R extends SettingRow>(row: R, keys: readonly (keyof R & string)[]) {
  return Object.fromEntries(keys.filter((k) => row[k] !== undefined).map((k) => [k, row[k]]));
}

/**
 * The environment schema of a service: each variable of its tables optional and without a
 * default, so that a variable left unset stays out of the options and the compiled defaults
 * fill it in (a service can tell a value it was given from a default). Variables in the order
 * of the tables, which is the order env-schema names several bad ones in.
 */
export function envSchemaOf(...tables: SettingsTable[]): TObject {
  const properties: Record<string, TOptional<TSchema>> = {};
  for (const table of tables)
    for (const [, row] of optionRows(table))
      if (row.env !== undefined) properties[row.env] = Type.Optional(schemaOf(row));
  return Type.Object(properties);
}

/**
 * The options that `checked` (an environment checked and coerced against {@link envSchemaOf})
 * sets: only the variables that are set appear. `switch` rows become booleans, `parsed` rows
 * go through their parser, which throws an Error naming the variable.
 */
export function optionsFromCheckedEnv<T extends SettingsTable>(
  table: T,
  checked: Readonly<Record<string, unknown>>,
): Partial<OptionsOf<T>> {
  const out: Record<string, unknown> = {};
  for (const [name, row] of optionRows(table)) {
    if (row.env === undefined) continue;
    const value = checked[row.env];
    if (value === undefined) continue;
    out[name] =
      row.type === 'switch'
        ? value === 'on'
        : row.type === 'parsed'
          ? row.parse(value as string, row.env) // its schema is a string's
          : value;
  }
  return out as Partial<OptionsOf<T>>;
}

/** The option rows of `table` with `published` set: option name → environment variable. */
export function publishedOf<T extends SettingsTable>(
  table: T,
  which: 'followed' | 'any' = 'any',
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, row] of optionRows(table)) {
    if (row.published === undefined || row.env === undefined) continue;
    if (which === 'followed' && row.published !== 'followed') continue;
    out[name] = row.env;
  }
  return out;
}
