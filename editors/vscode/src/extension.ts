// Entry point: activates on Python files, starts the server and registers the commands.
// The server's own executeCommand ids (`xeforge.selectDevice`, `xeforge.runStage`,
// `xeforge.verifyCompiled`) are registered by vscode-languageclient; the palette commands here use other ids so the two
// never collide.
import * as vscode from 'vscode';
import { Controller } from './controller';
import { devicePickItems, parseDevices } from './devices';
import { type StagesReply, stagePicks } from './stages';
import { reportArgument } from './report';
import { VERIFY_PALETTE_COMMAND } from './verify';

let controller: Controller | undefined;

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function pickDevice(c: Controller): Promise<void> {
  let items: ReturnType<typeof devicePickItems>;
  try {
    items = devicePickItems(parseDevices(await c.devices()));
  } catch (e) {
    void vscode.window.showErrorMessage(`XeForge: could not get the device list: ${errorText(e)}`);
    return;
  }
  if (items.length === 0) {
    void vscode.window.showWarningMessage('XeForge: the server returned no devices.');
    return;
  }
  const chosen = await vscode.window.showQuickPick(items, {
    title: 'XeForge: target device',
    placeHolder: 'Diagnostics, hovers and stages follow this device',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!chosen) return;
  try {
    await c.selectDevice(chosen.id);
  } catch (e) {
    void vscode.window.showErrorMessage(`XeForge: could not select ${chosen.id}: ${errorText(e)}`);
    return;
  }
  // Persist, so a restart keeps the choice: the workspace when one is open, else the user.
  const target = vscode.workspace.workspaceFolders?.length
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration('xeforge').update('device', chosen.id, target);
}

async function pickStage(c: Controller): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showInformationMessage('XeForge: open a Python file with a Triton kernel to run a stage.');
    return;
  }
  if (!c.running) {
    void vscode.window.showErrorMessage('XeForge: the server is not running (see XeForge: Show Logs).');
    return;
  }
  let reply: StagesReply | null;
  try {
    reply = (await c.stages(editor.document.uri.toString())) as StagesReply | null;
  } catch (e) {
    void vscode.window.showErrorMessage(`XeForge: could not get the stages: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  const picks = stagePicks(reply, editor.selection.active.line);
  if (picks.length === 0) {
    void vscode.window.showInformationMessage(
      'XeForge: no optimisation stage is offered for this file (stages appear above Triton kernels).',
    );
    return;
  }
  const chosen = await vscode.window.showQuickPick(picks, { title: 'XeForge: run a stage', matchOnDescription: true });
  if (!chosen) return;
  // Runs through the server's command; progress, cancel and the resulting edit come from it.
  await vscode.commands.executeCommand(chosen.command, ...chosen.arguments);
}

/** "XeForge: Verify Compiled Kernel": the server compiles the file and publishes what it found. */
async function verifyCompiled(c: Controller): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showInformationMessage('XeForge: open a Python file with a Triton kernel to verify it.');
    return;
  }
  try {
    await c.verifyCompiled(editor.document.uri.toString());
  } catch (e) {
    void vscode.window.showErrorMessage(`XeForge: could not verify: ${errorText(e)}`);
  }
}

/** The "Evidence report" lens (or the palette, for the workspace's runs): the page in a webview. */
async function showReport(c: Controller, arg: unknown): Promise<void> {
  const what = reportArgument(arg, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  if (!what) {
    void vscode.window.showWarningMessage('XeForge: open a folder with stage runs (.xeforge/runs) first.');
    return;
  }
  try {
    const page = await c.renderReport(what);
    const panel = vscode.window.createWebviewPanel('xeforge.report', 'XeForge evidence', vscode.ViewColumn.Beside, {
      enableScripts: false,
      localResourceRoots: [],
    });
    panel.webview.html = page.html;
    c.output.appendLine(`[client] evidence report: ${page.path}`);
  } catch (e) {
    void vscode.window.showErrorMessage(`XeForge: no evidence report: ${errorText(e)}`);
  }
}

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  const c = new Controller(ctx);
  controller = c;
  ctx.subscriptions.push(
    c,
    vscode.commands.registerCommand('xeforge.restartServer', () =>
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Restarting XeForge' },
        () => c.restart(),
      ),
    ),
    vscode.commands.registerCommand('xeforge.showLogs', () => c.output.show(true)),
    vscode.commands.registerCommand('xeforge.pickDevice', () => pickDevice(c)),
    vscode.commands.registerCommand('xeforge.pickStage', () => pickStage(c)),
    vscode.commands.registerCommand('xeforge.showReport', (arg?: unknown) => showReport(c, arg)),
    vscode.commands.registerCommand(VERIFY_PALETTE_COMMAND, () => verifyCompiled(c)),
  );
  await c.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
