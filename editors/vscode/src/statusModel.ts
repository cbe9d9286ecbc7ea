// What the language status item says. Kept apart from VS Code so the wording is tested.

export type ServerPhase = 'starting' | 'running' | 'stopped' | 'failed';

export interface HarnessInfo {
  /** e.g. "ready", "starting", "unreachable", "not configured" (as the server reports it). */
  state: string;
  detail?: string;
}

export interface StatusState {
  phase: ServerPhase;
  device?: string;
  toolchain?: string;
  harness?: HarnessInfo;
  /** Where the harness runs, from settings, when the server has not said. */
  harnessSetting?: { python?: string; url?: string };
  /** Which binary runs: its path, where it was found, and the version it reported. */
  server?: { command: string; source: string; version?: string };
  error?: string;
}

export type Severity = 'information' | 'warning' | 'error';

export interface StatusView {
  text: string;
  detail: string;
  severity: Severity;
  busy: boolean;
}

function harnessText(s: StatusState): string {
  if (s.harness) return s.harness.detail ? `${s.harness.state} (${s.harness.detail})` : s.harness.state;
  if (s.harnessSetting?.url) return `remote ${s.harnessSetting.url}`;
  if (s.harnessSetting?.python) return `local ${s.harnessSetting.python}`;
  return 'local (project .venv or python3)';
}

function serverText(s: StatusState): string {
  if (!s.server) return '';
  const version = s.server.version ? ` ${s.server.version}` : '';
  return ` · server${version}: ${s.server.source} (${s.server.command})`;
}

export function statusView(s: StatusState): StatusView {
  const target = `${s.device ?? 'default device'} · ${s.toolchain ?? 'default toolchain'}`;
  switch (s.phase) {
    case 'starting':
      return { text: 'XeForge starting', detail: target, severity: 'information', busy: true };
    case 'failed':
      return { text: 'XeForge failed', detail: s.error ?? 'the server did not start', severity: 'error', busy: false };
    case 'stopped':
      return { text: 'XeForge stopped', detail: s.error ?? 'the server is not running', severity: 'warning', busy: false };
    case 'running': {
      const harnessBad = s.harness && /unreachable|error|failed|missing/i.test(s.harness.state);
      return {
        text: `XeForge ${target}`,
        detail: `harness: ${harnessText(s)}${serverText(s)}`,
        severity: harnessBad ? 'warning' : 'information',
        busy: false,
      };
    }
  }
}

/** Reads an optional `xeforge/status` notification from the server; unknown fields ignored. */
export function applyServerStatus(prev: StatusState, params: unknown): StatusState {
  if (!params || typeof params !== 'object') return prev;
  const o = params as Record<string, unknown>;
  const next: StatusState = { ...prev };
  if (typeof o.device === 'string') next.device = o.device;
  if (typeof o.toolchain === 'string') next.toolchain = o.toolchain;
  const h = o.harness;
  if (typeof h === 'string') next.harness = { state: h };
  else if (h && typeof h === 'object') {
    const ho = h as Record<string, unknown>;
    if (typeof ho.state === 'string') {
      next.harness = { state: ho.state, detail: typeof ho.detail === 'string' ? ho.detail : undefined };
    }
  }
  return next;
}
