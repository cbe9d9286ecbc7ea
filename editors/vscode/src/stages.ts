// "Run Stage…" offers exactly the stage actions the server put on the active file as code
// lenses (command `xeforge.runStage`), so the palette and the lenses can never disagree.
// The lenses of the kernel under (or nearest above) the cursor come first.

export const RUN_STAGE_COMMAND = 'xeforge.runStage';

export interface LensLike {
  /** 0-based line of the lens. */
  line: number;
  title: string;
  command: string;
  arguments?: unknown[];
}

export interface StagePick {
  label: string;
  description?: string;
  command: string;
  arguments: unknown[];
  line: number;
}

function argField(args: unknown[] | undefined, ...keys: string[]): string | undefined {
  const first = args?.[0];
  if (!first || typeof first !== 'object') return undefined;
  const o = first as Record<string, unknown>;
  for (const k of keys) if (typeof o[k] === 'string') return o[k] as string;
  return undefined;
}

export function stagePicks(lenses: LensLike[], cursorLine: number): StagePick[] {
  const stageLenses = lenses.filter((l) => l.command === RUN_STAGE_COMMAND);
  // Distance to the cursor: lenses above it (the enclosing kernel's def) rank by closeness,
  // lenses below it after all of those.
  const rank = (l: LensLike) => (l.line <= cursorLine ? cursorLine - l.line : 1e9 + l.line);
  return [...stageLenses]
    .sort((a, b) => rank(a) - rank(b))
    .map((l) => {
      const kernel = argField(l.arguments, 'kernel', 'kernelName');
      return {
        label: l.title.replace(/^\$\([^)]*\)\s*/, ''),
        description: [kernel, `line ${l.line + 1}`].filter(Boolean).join(' · '),
        command: l.command,
        arguments: l.arguments ?? [],
        line: l.line,
      };
    });
}
