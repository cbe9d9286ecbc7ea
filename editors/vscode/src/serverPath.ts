// Where the xeforge binary comes from, in the documented order:
// 1. the `xeforge.server.path` setting, 2. a binary bundled inside the extension,
// 3. `xeforge` on PATH. Pure logic over an injected file-system view so it is unit-tested
// without VS Code.
import * as path from 'path';

export type ServerSource = 'setting' | 'bundled' | 'path';

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

export function resolveServer(env: LookupEnv): ResolvedServer {
  const configured = env.configuredPath.trim();
  if (configured) {
    // An explicit setting that is wrong is an error, never silently replaced by another binary.
    const p = expandUserPath(configured, env);
    if (env.isExecutable(p)) return { command: p, source: 'setting' };
    throw new ServerNotFound(
      `xeforge.server.path is set to "${configured}", but ${p} is not an executable file. ` +
        'Fix the setting or clear it to use the bundled binary or `xeforge` on PATH.',
      [p],
    );
  }
  const bundled = bundledPath(env.extensionPath, env.platform, env.arch);
  if (env.isExecutable(bundled)) return { command: bundled, source: 'bundled' };
  const onPath = searchPath(env);
  if (onPath) return { command: onPath, source: 'path' };
  throw new ServerNotFound(
    'The xeforge language server was not found. Install it with `cargo install --path .` in a ' +
      'xeforge checkout (so that `xeforge` is on PATH), or set xeforge.server.path to the binary.',
    [bundled, `${binaryName(env.platform)} on PATH`],
  );
}
