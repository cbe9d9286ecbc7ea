// "Run Stage…" offers the stages the server's `xeforge/stages` lists for the file's kernels, each
// with its ready `xeforge.runStage` command, so the palette, the lenses and the code actions can
// never disagree. The kernel under (or nearest above) the cursor comes first, and within a kernel
// the stages its analysis recommends.

export const RUN_STAGE_COMMAND = 'xeforge.runStage';
export const STAGES_REQUEST = 'xeforge/stages';

export interface ServerCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}

/** The reply of `xeforge/stages` (fields the picker reads). */
export interface StagesReply {
  kernels?: {
    name: string;
    /** 0-based line of the kernel's `def`. */
    line: number;
    stages?: { name: string; title: string; summary?: string; recommended?: boolean; command?: ServerCommand }[];
  }[];
}

export interface StagePick {
  label: string;
  description?: string;
  detail?: string;
  command: string;
  arguments: unknown[];
  line: number;
}

export function stagePicks(reply: StagesReply | null | undefined, cursorLine: number): StagePick[] {
  // Distance to the cursor: kernels above it (the enclosing kernel's def) rank by closeness, kernels
  // below it after all of those; then recommended stages, then the server's order.
  const rank = (line: number) => (line <= cursorLine ? cursorLine - line : 1e9 + line);
  const picks: (StagePick & { recommended: boolean; order: number })[] = [];
  for (const k of reply?.kernels ?? []) {
    for (const s of k.stages ?? []) {
      if (!s.command || s.command.command !== RUN_STAGE_COMMAND) continue;
      picks.push({
        label: s.title + (s.recommended ? ' (recommended)' : ''),
        description: [k.name, `line ${k.line + 1}`].join(' · '),
        detail: s.summary,
        command: s.command.command,
        arguments: s.command.arguments ?? [],
        line: k.line,
        recommended: s.recommended === true,
        order: picks.length,
      });
    }
  }
  picks.sort((a, b) => rank(a.line) - rank(b.line) || Number(b.recommended) - Number(a.recommended) || a.order - b.order);
  return picks.map(({ recommended: _r, order: _o, ...p }) => p);
}
