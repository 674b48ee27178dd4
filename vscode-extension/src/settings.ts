// Pure logic (no `vscode` import) so that it runs under the unit tests.

/** The subset of the `onnxLint` configuration the server understands, as it expects it. */
export interface ServerSettings {
  select?: string[] | null;
  extendSelect?: string[] | null;
  ignore?: string[] | null;
  lintOnChange?: boolean;
  runtimeCheck?: boolean;
  runtimeProbe?: boolean;
  lintTimeout?: number;
  quantize?: Record<string, unknown>;
}

/** Anything with VS Code's `WorkspaceConfiguration.get`. */
export interface ConfigurationLike {
  get<T>(section: string): T | undefined;
}

const QUANTIZE_KEYS = ["calibrationData", "output", "calibrationMethod", "perChannel", "keepIoTypes", "target", "minCosine"];

/**
 * The server's settings from the `onnxLint` section. Selectors default to `[]` (so the Settings UI can edit
 * them); an empty list stays out, leaving the configuration file in charge (an empty `select` would
 * otherwise enable no rule at all).
 */
export function serverSettings(config: ConfigurationLike): ServerSettings {
  const settings: ServerSettings = {};
  for (const key of ["select", "extendSelect", "ignore"] as const) {
    const value = config.get<string[] | null>(key);
    if (Array.isArray(value) && value.length > 0) {
      settings[key] = value;
    }
  }
  for (const key of ["lintOnChange", "runtimeCheck", "runtimeProbe"] as const) {
    const value = config.get<boolean>(key);
    if (typeof value === "boolean") {
      settings[key] = value;
    }
  }
  const timeout = config.get<number>("lintTimeout");
  if (typeof timeout === "number" && timeout > 0) {
    settings.lintTimeout = timeout;
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
