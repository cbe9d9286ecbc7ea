// VS Code settings → the server's `initializationOptions` (the same shape the server reads
// from `workspace/configuration` section `xeforge`). Empty strings mean "not set" and are
// left out, so the project's pyproject.toml / xeforge.toml and the server's defaults apply.

export type LintRun = 'onType' | 'onSave';

export interface XeforgeSettings {
  device?: string;
  toolchain?: string;
  lint: { run: LintRun };
  /** `workspace`: the server advertises `workspace/diagnostic` and the client pulls every Triton file. */
  diagnostics: { workspace: boolean };
  llm: { url?: string; model?: string; apiKeyEnv?: string };
  harness: { python?: string; url?: string; tokenEnv?: string };
  trace: { server: 'off' | 'messages' | 'verbose' };
}

/** Reads one key below `xeforge.` (e.g. `lint.run`); undefined when unset. */
export type SettingGetter = (key: string) => unknown;

function text(get: SettingGetter, key: string): string | undefined {
  const v = get(key);
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;
}

function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}

export function readSettings(get: SettingGetter): XeforgeSettings {
  return compact({
    device: text(get, 'device'),
    toolchain: text(get, 'toolchain'),
    lint: { run: oneOf(get('lint.run'), ['onType', 'onSave'] as const, 'onType') },
    diagnostics: { workspace: get('diagnostics.workspace') === true },
    llm: compact({
      url: text(get, 'llm.url'),
      model: text(get, 'llm.model'),
      apiKeyEnv: text(get, 'llm.apiKeyEnv'),
    }),
    harness: compact({ python: text(get, 'harness.python'), url: text(get, 'harness.url'), tokenEnv: text(get, 'harness.tokenEnv') }),
    trace: { server: oneOf(get('trace.server'), ['off', 'messages', 'verbose'] as const, 'off') },
  });
}

/**
 * Settings whose change needs a new server process rather than a didChangeConfiguration: the
 * binary, and workspace diagnostics, a capability the server states once, at `initialize`.
 */
export const RESTART_KEYS = ['xeforge.server.path', 'xeforge.diagnostics.workspace'] as const;
