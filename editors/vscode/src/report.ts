// The evidence report of stage runs in a webview: the server writes the page (`xeforge.renderReport`)
// and returns it; the page is self-contained (inline SVG, no script), so the webview runs no script
// and loads nothing.

export const RENDER_REPORT_COMMAND = 'xeforge.renderReport';

export interface RenderedReport {
  path: string;
  html: string;
}

/** The server's reply, checked: any other shape is an error, never a guess. */
export function parseReport(reply: unknown): RenderedReport {
  const r = reply as Partial<RenderedReport> | null;
  if (!r || typeof r !== 'object' || typeof r.path !== 'string' || typeof r.html !== 'string') {
    throw new Error(`unexpected reply to ${RENDER_REPORT_COMMAND}: ${JSON.stringify(reply)?.slice(0, 200)}`);
  }
  return { path: r.path, html: r.html };
}

/** What the report is of: the lens's record, else the workspace folder's runs directory. */
export function reportArgument(arg: unknown, workspaceFolder: string | undefined): { record: string } | { dir: string } | undefined {
  const record = (arg as { record?: unknown } | undefined)?.record;
  if (typeof record === 'string' && record) return { record };
  return workspaceFolder ? { dir: `${workspaceFolder}/.xeforge/runs` } : undefined;
}
