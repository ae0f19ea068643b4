// The commands' options, generated from config.ts's SETTINGS: one commander option per
// setting (every command takes every setting, so one config file serves them all), its help
// row made of the setting's flag, environment variable, config-file key and default. Values
// are left unset when not given: loadServerConfig, not commander, applies environment, file
// and defaults, in that order.

import { type Command, Option } from 'commander';
import { loadServerConfig, SETTINGS, type ServerConfig } from '../config.ts';

type Setting = (typeof SETTINGS)[number];
type SettingKey = Setting['key'];

/** What an empty default means, in the help (the docs table says the same). */
const EMPTY_DEFAULTS: Partial<Record<SettingKey, string>> = {
  publicUrl: 'http://<listen address>',
  database: 'SQLite in the data dir',
  objectStore: '<data dir>/objects',
  tlsCert: 'none: plain HTTP',
  tlsKey: 'none: plain HTTP',
};

/** The options help shows in the settings table (flag, variable, key, default) rather than as prose. */
export const SETTINGS_TABLE_OPTIONS = new WeakSet<Option>();
const SETTING_OF = new WeakMap<Option, Setting>();

/** A settings-table row: flag, environment variable, config-file key, (default). */
export function settingsTableRow(option: Option): string[] {
  const s = SETTING_OF.get(option) as Setting;
  return [`--${s.flag}`, s.env, s.file, `(${s.default || (EMPTY_DEFAULTS[s.key] ?? 'none')})`];
}

function settingOption(s: Setting, description: string, value = 'value'): Option {
  const option = new Option('boolean' in s ? `--${s.flag}` : `--${s.flag} <${value}>`, description);
  SETTING_OF.set(option, s);
  return option;
}

/**
 * Adds every setting and --config to `command`. `shown`: 'table' lists them all in the settings
 * table (serve); otherwise only the settings named are shown, each as "<what it is> (VARIABLE,
 * key file_key; default …)", the others accepted but left out of the help.
 */
export function addSettingOptions(
  command: Command,
  shown: 'table' | Partial<Record<SettingKey, { value: string; what: string }>>,
): Command {
  for (const s of SETTINGS) {
    if (shown === 'table') {
      const option = settingOption(s, '');
      SETTINGS_TABLE_OPTIONS.add(option);
      command.addOption(option);
      continue;
    }
    const prose = shown[s.key];
    if (!prose) {
      command.addOption(settingOption(s, '').hideHelp());
      continue;
    }
    const fallback = s.default || EMPTY_DEFAULTS[s.key];
    const option = settingOption(
      s,
      `${prose.what} (${s.env}, key ${s.file}${fallback ? `; default ${fallback}` : ''})`,
      prose.value,
    );
    command.addOption(option);
  }
  return command.addOption(
    new Option(
      '--config <file>',
      shown === 'table'
        ? 'YAML file with the config-file keys above (GUARD_SERVER_CONFIG)'
        : 'YAML config file (GUARD_SERVER_CONFIG)',
    ),
  );
}

/** The command's flags as config.ts reads them (keyed by flag name), loaded and validated. */
export function serverConfigOf(command: Command): ServerConfig {
  const flags: Record<string, string | boolean | undefined> = {};
  for (const option of command.options)
    if (option.long) flags[option.long.slice(2)] = command.getOptionValue(option.attributeName());
  return loadServerConfig(flags, process.env, process.cwd());
}
