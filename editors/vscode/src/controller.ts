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
import { ResolvedServer, ServerNotFound, resolveServer } from './serverPath';
import { readSettings, RESTART_KEYS, XeforgeSettings } from './settings';
import { parseDevices } from './devices';
import { applyServerStatus, StatusState, statusView } from './statusModel';
import { ASK_PROBLEM_REQUEST, askProblem } from './askProblem';
import { STAGES_REQUEST } from './stages';

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
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
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
    this.output.appendLine(`[client] starting ${server.command} lsp (found via ${server.source})`);
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
    void this.refreshDevice();
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
