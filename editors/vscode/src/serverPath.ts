// Where the xeforge binary comes from, in the documented order (as ruff's extension does):
// 1. the `xeforge.server.path` setting, 2. the project's Python environment (the `xeforge` that
// `pip install xeforge` put beside the selected interpreter), 3. a binary bundled inside the
// extension, 4. `xeforge` on PATH. Pure logic over an injected file-system view so it is
// unit-tested without VS Code.
import * as path from 'path';

export type ServerSource = 'setting' | 'environment' | 'bundled' | 'path';

export interface ResolvedServer {
  command: string;
  source: ServerSource;
}

export interface LookupEnv {
  /** Value of `xeforge.server.path` (may be empty). */
  configuredPath: string;
  /** Absolute folder of the installed extension. */
  extensionPath: string;
  /** First workspace folder, for `${workspaceFolder}` expansion. */
  workspaceFolder?: string;
  homeDir: string;
  platform: NodeJS.Platform;
  arch: string;
  /** Python interpreters of the project, the selected one first (`.../bin/python`). */
  interpreters: string[];
  /** The PATH variable. */
  pathVar: string;
  /** True if `p` is an existing regular file that may be executed. */
  isExecutable(p: string): boolean;
}

/** Lookup failed: `message` says what was tried and what to do, for an error notification. */
export class ServerNotFound extends Error {
  constructor(
    message: string,
    readonly tried: string[],
  ) {
    super(message);
    this.name = 'ServerNotFound';
  }
}

export function binaryName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'xeforge.exe' : 'xeforge';
}

/** Where a packaged extension carries its own binary: `bin/<platform>-<arch>/xeforge`. */
export function bundledPath(extensionPath: string, platform: NodeJS.Platform, arch: string): string {
  return path.join(extensionPath, 'bin', `${platform}-${arch}`, binaryName(platform));
}

export function expandUserPath(raw: string, env: Pick<LookupEnv, 'homeDir' | 'workspaceFolder'>): string {
  let p = raw.trim();
  if (p === '~' || p.startsWith('~/') || p.startsWith('~\\')) {
    p = path.join(env.homeDir, p.slice(1));
  }
  if (p.includes('${workspaceFolder}')) {
    if (!env.workspaceFolder) {
      throw new ServerNotFound(
        `xeforge.server.path uses \${workspaceFolder} ("${raw}") but no folder is open.`,
        [raw],
      );
    }
    p = p.split('${workspaceFolder}').join(env.workspaceFolder);
  }
  if (!path.isAbsolute(p) && env.workspaceFolder) {
    // A relative setting is read against the workspace, as other VS Code tool paths are.
    p = path.join(env.workspaceFolder, p);
  }
  return p;
}

export function searchPath(env: LookupEnv): string | undefined {
  const sep = env.platform === 'win32' ? ';' : ':';
  const name = binaryName(env.platform);
  for (const dir of env.pathVar.split(sep)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (env.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The `xeforge` a wheel installed beside one of the project's interpreters. */
export function environmentServer(env: LookupEnv): string | undefined {
  for (const interpreter of env.interpreters) {
    let expanded: string;
    try {
      expanded = expandUserPath(interpreter, env);
    } catch {
      continue; // `${workspaceFolder}` with no folder open: that interpreter cannot be found
    }
    const candidate = path.join(path.dirname(expanded), binaryName(env.platform));
    if (env.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** What each source means, for the status item and logs. */
export function describeSource(source: ServerSource): string {
  switch (source) {
    case 'setting':
      return 'xeforge.server.path';
    case 'environment':
      return "the project's Python environment";
    case 'bundled':
      return 'bundled with the extension';
    case 'path':
      return 'PATH';
  }
}

export function resolveServer(env: LookupEnv): ResolvedServer {
  const configured = env.configuredPath.trim();
  if (configured) {
    // An explicit setting that is wrong is an error, never silently replaced by another binary.
    const p = expandUserPath(configured, env);
    if (env.isExecutable(p)) return { command: p, source: 'setting' };
    throw new ServerNotFound(
      `xeforge.server.path is set to "${configured}", but ${p} is not an executable file. ` +
        "Fix the setting or clear it to use the project environment's, the bundled or PATH's `xeforge`.",
      [p],
    );
  }
  const fromEnv = environmentServer(env);
  if (fromEnv) return { command: fromEnv, source: 'environment' };
  const bundled = bundledPath(env.extensionPath, env.platform, env.arch);
  if (env.isExecutable(bundled)) return { command: bundled, source: 'bundled' };
  const onPath = searchPath(env);
  if (onPath) return { command: onPath, source: 'path' };
  throw new ServerNotFound(
    'The xeforge language server was not found. Install it into the project environment with ' +
      '`pip install xeforge` (a wheel built from a checkout: see the README), or set xeforge.server.path to the binary.',
    [...env.interpreters.map((i) => path.join(path.dirname(i), binaryName(env.platform))), bundled, `${binaryName(env.platform)} on PATH`],
  );
}
