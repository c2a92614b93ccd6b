export { completeAuth, completeSettings, defaultHome, homePaths, queueListProblem, DEFAULTS, type CarrierChoice, type QueueConfig, type Settings, type SettingsInput, type TlsConfig, type WrittenAs } from './settings.ts';
export { resolveConfig, type Flags, type ResolvedConfig } from './resolve.ts';
export { SETTING_SOURCES, settingsTable } from './settings-table.ts';
