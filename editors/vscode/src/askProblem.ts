// `xeforge/askProblem` (server → client): a stage needs sizes nothing in the code gives. The client
// asks once in an input box starting from the server's suggestion; the server writes the answer above
// the entry as `# xeforge: dims ...` (where the command line reads it) and the same run goes on.
// Pure: the controller passes the editor's input box in.

export const ASK_PROBLEM_REQUEST = 'xeforge/askProblem';

export interface AskProblem {
  entry: string;
  missing: string[];
  suggestion: string;
  line: number;
  message: string;
}

export interface InputBox {
  title: string;
  prompt: string;
  value: string;
  placeHolder: string;
  ignoreFocusOut: boolean;
  validateInput: (value: string) => string | undefined;
}

/** The request's params, or undefined when they are not what the server sends. */
export function parseAskProblem(p: unknown): AskProblem | undefined {
  if (typeof p !== 'object' || p === null) return undefined;
  const o = p as Record<string, unknown>;
  if (typeof o.entry !== 'string' || typeof o.suggestion !== 'string') return undefined;
  const missing = Array.isArray(o.missing) ? o.missing.filter((m): m is string => typeof m === 'string') : [];
  return {
    entry: o.entry,
    missing,
    suggestion: o.suggestion,
    line: typeof o.line === 'number' ? o.line : 0,
    message: typeof o.message === 'string' ? o.message : '',
  };
}

/** The input box for a question: what is missing, where the answer goes, a check for placeholders. */
export function inputBoxFor(q: AskProblem): InputBox {
  const name = q.entry.split('.').pop() ?? q.entry;
  return {
    title: `XeForge: sizes for ${q.entry}`,
    prompt: `Nothing in the code says ${q.missing.join('; ') || 'these sizes'}. Written above \`def ${name}\` as # xeforge: dims …`,
    value: q.suggestion,
    placeHolder: 'NAME=VALUE … dtype=float16',
    ignoreFocusOut: true,
    validateInput: (value: string) =>
      value.trim() === ''
        ? 'give NAME=VALUE pairs'
        : value.includes('<value>')
          ? 'replace <value> with a value'
          : undefined,
  };
}

/** Ask with `show` (the editor's input box); `null` when dismissed: the run ends saying what to add. */
export async function askProblem(
  params: unknown,
  show: (box: InputBox) => Thenable<string | undefined>,
): Promise<{ answer: string } | null> {
  const q = parseAskProblem(params);
  if (!q) return null;
  const answer = await show(inputBoxFor(q));
  return answer === undefined || answer.trim() === '' ? null : { answer: answer.trim() };
}
