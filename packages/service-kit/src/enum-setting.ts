/** A settings row of a few named values (SettingsTable's `enum` rows). */
interface EnumRow<V extends string> {
  env: string;
  values: readonly V[];
  default: V;
}

/**
 * The value of an `enum` setting read outside the services' environment schemas (`runMain`): its
 * default when unset or empty.
 * @throws an Error naming the setting for any other value
 */
export function enumSettingFrom<V extends string>(row: EnumRow<V>, value: string | undefined): V {
  if (value === undefined || value === '') return row.default;
  const found = row.values.find((v) => v === value);
  if (found === undefined)
    throw new Error(`${row.env}=${value} is not one of ${row.values.join(', ')}`);
  return found;
}
