// Pure logic (no `vscode` import) so that it runs under the unit tests.

/** The subset of the `onnxLint` configuration the server understands, as it expects it. */
export interface ServerSettings {
  select?: string[] | null;
  extendSelect?: string[] | null;
  ignore?: string[] | null;
  lintOnChange?: boolean;
  runtimeCheck?: boolean;
  quantize?: Record<string, unknown>;
}

/** Anything with VS Code's `WorkspaceConfiguration.get`. */
export interface ConfigurationLike {
  get<T>(section: string): T | undefined;
}

const QUANTIZE_KEYS = ["calibrationData", "output", "calibrationMethod", "perChannel", "keepIoTypes"];

/** The server's settings from the `onnxLint` section: unset selectors stay out (the config file rules). */
export function serverSettings(config: ConfigurationLike): ServerSettings {
  const settings: ServerSettings = {};
  for (const key of ["select", "extendSelect", "ignore"] as const) {
    const value = config.get<string[] | null>(key);
    if (Array.isArray(value)) {
      settings[key] = value;
    }
  }
  for (const key of ["lintOnChange", "runtimeCheck"] as const) {
    const value = config.get<boolean>(key);
    if (typeof value === "boolean") {
      settings[key] = value;
    }
  }
  const quantize: Record<string, unknown> = {};
  for (const key of QUANTIZE_KEYS) {
    const value = config.get<unknown>(`quantize.${key}`);
    if (value !== undefined && value !== null && value !== "") {
      quantize[key] = value;
    }
  }
  settings.quantize = quantize;
  return settings;
}
