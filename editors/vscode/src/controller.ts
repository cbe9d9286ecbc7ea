// Owns the language client's life: lookup, start, stop, queued restarts, the settings bridge
// and the language status item. Commands call into it; nothing else touches the client.
import * as os from 'os';
import * as fs from 'fs';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { RestartQueue } from './restartQueue';
import { ResolvedServer, ServerNotFound, describeSource, resolveServer } from './serverPath';
import { readSettings, RESTART_KEYS, XeforgeSettings } from './settings';
import { parseDevices } from './devices';
import { applyServerStatus, StatusState, statusView } from './statusModel';
import { ASK_PROBLEM_REQUEST, askProblem } from './askProblem';
import { STAGES_REQUEST } from './stages';
import { RENDER_REPORT_COMMAND, RenderedReport, parseReport } from './report';
import { VERIFY_COMPILED_COMMAND, verifyArgument } from './verify';

export const CLIENT_ID = 'xeforge';
export const DEVICES_REQUEST = 'xeforge/devices';
export const STATUS_NOTIFICATION = 'xeforge/status';
export const SELECT_DEVICE_COMMAND = 'xeforge.selectDevice';

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The project's Python interpreters, the selected one first: the Python extension's active
 * environment where it is installed, `python.defaultInterpreterPath`, then `.venv` and `venv` in the
 * folder. A wheel install (`pip install xeforge`) puts `xeforge` beside each.
 */
async function projectInterpreters(folder: vscode.WorkspaceFolder | undefined): Promise<string[]> {
  const found: string[] = [];
  const python = vscode.extensions.getExtension('ms-python.python');
  if (python) {
    try {
      const api = (await python.activate()) as
        | { environments?: { getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } } }
        | undefined;
      const active = api?.environments?.getActiveEnvironmentPath?.(folder?.uri)?.path;
      if (active) found.push(active);
    } catch {
      // The Python extension failed to start: the other places still count.
    }
  }
  const configured = vscode.workspace.getConfiguration('python', folder?.uri).get<string>('defaultInterpreterPath');
  if (configured && configured !== 'python') found.push(configured);
  if (folder) {
    const bin = process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python';
    for (const venv of ['.venv', 'venv']) found.push(`${folder.uri.fsPath}/${venv}/${bin}`);
  }
  return found;
}

export function settingsFor(scope?: vscode.ConfigurationScope): XeforgeSettings {
  const cfg = vscode.workspace.getConfiguration('xeforge', scope);
  return readSettings((key) => cfg.get(key));
}

export class Controller implements vscode.Disposable {
  readonly output: vscode.OutputChannel;
  private client: LanguageClient | undefined;
  private readonly status: vscode.LanguageStatusItem;
  private state: StatusState = { phase: 'stopped' };
  private readonly restarts = new RestartQueue(() => this.restartNow());
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly ctx: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('XeForge');
    this.status = vscode.languages.createLanguageStatusItem('xeforge.status', { language: 'python' });
    this.status.name = 'XeForge';
    this.status.command = { command: 'xeforge.pickDevice', title: 'Select Device' };
    this.disposables.push(
      this.output,
      this.status,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
    );
    this.render();
  }

  get running(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  /** Resolves the binary and starts the client; failures are reported, never thrown. */
  async start(): Promise<void> {
    const workspaceFolder = vscode.workspace.workspaceFolders?.[0];
    const folder = workspaceFolder?.uri.fsPath;
    const settings = settingsFor();
    this.setState({
      phase: 'starting',
      device: settings.device,
      toolchain: settings.toolchain,
      harnessSetting: settings.harness,
      harness: undefined,
      error: undefined,
    });
    let server: ResolvedServer;
    try {
      server = resolveServer({
        configuredPath: vscode.workspace.getConfiguration('xeforge').get<string>('server.path') ?? '',
        extensionPath: this.ctx.extensionPath,
        workspaceFolder: folder,
        homeDir: os.homedir(),
        platform: process.platform,
        arch: process.arch,
        pathVar: process.env.PATH ?? '',
        interpreters: await projectInterpreters(workspaceFolder),
        isExecutable,
      });
    } catch (e) {
      const message = e instanceof ServerNotFound ? e.message : String(e);
      this.output.appendLine(`[client] ${message}`);
      if (e instanceof ServerNotFound) this.output.appendLine(`[client] tried: ${e.tried.join(', ')}`);
      this.setState({ ...this.state, phase: 'failed', error: message });
      void this.reportStartFailure(message);
      return;
    }
    this.output.appendLine(`[client] starting ${server.command} lsp (found via ${describeSource(server.source)})`);
    this.setState({ ...this.state, server: { command: server.command, source: describeSource(server.source) } });
    const client = this.createClient(server, settings);
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      const message = `The xeforge language server (${server.command}) did not start: ${e instanceof Error ? e.message : String(e)}`;
      this.output.appendLine(`[client] ${message}`);
      this.setState({ ...this.state, phase: 'failed', error: message });
      void this.reportStartFailure(message);
      return;
    }
    this.checkVersion(client, server);
    void this.refreshDevice();
  }

  /** Server and extension are released as one number; a mismatch is said once, plainly. */
  private checkVersion(client: LanguageClient, server: ResolvedServer): void {
    const serverVersion = client.initializeResult?.serverInfo?.version;
    const ours = String((this.ctx.extension.packageJSON as { version?: unknown }).version ?? '');
    this.setState({ ...this.state, server: { command: server.command, source: describeSource(server.source), version: serverVersion } });
    if (serverVersion && ours && serverVersion !== ours) {
      const message =
        `The xeforge server ${serverVersion} (${server.command}, from ${describeSource(server.source)}) ` +
        `differs from this extension's version ${ours}. Install matching versions (pip install xeforge==${ours}), ` +
        'or set xeforge.server.path.';
      this.output.appendLine(`[client] ${message}`);
      void vscode.window.showWarningMessage(message);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      if (client.state !== State.Stopped) await client.stop(3000);
    } catch (e) {
      this.output.appendLine(`[client] stop: ${e instanceof Error ? e.message : String(e)}`);
    }
    await client.dispose().catch(() => undefined);
    this.setState({ ...this.state, phase: 'stopped' });
  }

  /** Queued: at most one restart runs at a time. */
  restart(): Promise<void> {
    return this.restarts.request();
  }

  private async restartNow(): Promise<void> {
    this.output.appendLine('[client] restarting the server');
    await this.stop();
    await this.start();
  }

  async devices(): Promise<unknown> {
    const client = this.running;
    if (!client) throw new Error('The xeforge server is not running.');
    return client.sendRequest(DEVICES_REQUEST, {});
  }

  /** Asks the server to write an evidence report; returns the page. */
  async renderReport(arg: { record: string } | { dir: string }): Promise<RenderedReport> {
    const client = this.running;
    if (!client) throw new Error('The xeforge server is not running.');
    return parseReport(await client.sendRequest(ExecuteCommandRequest.type, { command: RENDER_REPORT_COMMAND, arguments: [arg] }));
  }

  /** Asks the server to compile a document on its harness; progress and findings come from the server. */
  async verifyCompiled(uri: string): Promise<void> {
    const client = this.running;
    if (!client) throw new Error('The xeforge server is not running.');
    await client.sendRequest(ExecuteCommandRequest.type, { command: VERIFY_COMPILED_COMMAND, arguments: [verifyArgument(uri)] });
  }

  /** `xeforge/stages` for a document: its kernels and the stages offered for each. */
  async stages(uri: string): Promise<unknown> {
    const client = this.running;
    if (!client) throw new Error('The xeforge server is not running.');
    return client.sendRequest(STAGES_REQUEST, { textDocument: { uri } });
  }

  async selectDevice(id: string): Promise<void> {
    const client = this.running;
    if (!client) throw new Error('The xeforge server is not running.');
    // The server answers with the device list and the selection now in effect.
    const reply = parseDevices(
      await client.sendRequest(ExecuteCommandRequest.type, { command: SELECT_DEVICE_COMMAND, arguments: [{ device: id }] }),
    );
    this.setState({ ...this.state, device: reply.device, toolchain: reply.toolchain });
  }

  private createClient(server: ResolvedServer, settings: XeforgeSettings): LanguageClient {
    const serverOptions: ServerOptions = {
      run: { command: server.command, args: ['lsp'] },
      debug: { command: server.command, args: ['lsp'] },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
        // Python cells of Jupyter notebooks: hovers and quick fixes there. Their text reaches the
        // server through notebook sync (the server's `notebookDocumentSync`), which the client
        // uses for them instead of text sync; their diagnostics are pushed per cell.
        { notebook: 'jupyter-notebook', language: 'python' },
      ],
      initializationOptions: settings,
      outputChannel: this.output,
      traceOutputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: {
        workspace: {
          // Answer `workspace/configuration` for our section with the same cleaned-up shape as
          // initializationOptions (no empty strings standing for "unset").
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) return answers;
            return params.items.map((item, i) =>
              item.section === 'xeforge'
                ? settingsFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : answers[i],
            );
          },
        },
      },
    };
    const client = new LanguageClient(CLIENT_ID, 'XeForge', serverOptions, clientOptions);
    // Inline suggestions (a finding's fix, a verified stage result as ghost text, accepted with Tab)
    // are LSP 3.18 `textDocument/inlineCompletion`, among the proposed features of
    // vscode-languageclient 9; the item's command (`xeforge.acceptInline`) is the server's.
    client.registerProposedFeatures();
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) this.setState({ ...this.state, phase: 'running' });
      else if (e.newState === State.Starting) this.setState({ ...this.state, phase: 'starting' });
      else this.setState({ ...this.state, phase: 'stopped' });
    });
    client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
      if (this.client === client) this.setState(applyServerStatus(this.state, params));
    });
    client.onRequest(ASK_PROBLEM_REQUEST, (params: unknown) => askProblem(params, (box) => vscode.window.showInputBox(box)));
    return client;
  }

  private async refreshDevice(): Promise<void> {
    try {
      const list = parseDevices(await this.devices());
      this.setState({ ...this.state, device: list.device, toolchain: list.toolchain });
    } catch (e) {
      this.output.appendLine(`[client] ${DEVICES_REQUEST}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('xeforge')) return;
    if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) {
      void this.restart();
      return;
    }
    const settings = settingsFor();
    this.setState({
      ...this.state,
      device: settings.device ?? this.state.device,
      toolchain: settings.toolchain ?? this.state.toolchain,
      harnessSetting: settings.harness,
    });
    const client = this.running;
    if (client) {
      void client
        .sendNotification('workspace/didChangeConfiguration', { settings: { xeforge: settings } })
        .catch((err: unknown) => this.output.appendLine(`[client] didChangeConfiguration: ${String(err)}`));
    }
  }

  private async reportStartFailure(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, 'Open Settings', 'Show Logs');
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'xeforge.server.path');
    } else if (choice === 'Show Logs') {
      this.output.show(true);
    }
  }

  private setState(next: StatusState): void {
    this.state = next;
    this.render();
  }

  private render(): void {
    const view = statusView(this.state);
    this.status.text = view.text;
    this.status.detail = view.detail;
    this.status.busy = view.busy;
    this.status.severity =
      view.severity === 'error'
        ? vscode.LanguageStatusSeverity.Error
        : view.severity === 'warning'
          ? vscode.LanguageStatusSeverity.Warning
          : vscode.LanguageStatusSeverity.Information;
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }
}
