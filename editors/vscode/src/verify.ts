// "XeForge: Verify Compiled Kernel": asks the server to compile the file on its harness
// (`xeforge.verifyCompiled`, the command behind the "Re-verify on the harness" code action). The
// server reports the progress, the outcome and the compiled findings itself; this only names the file.

export const VERIFY_COMPILED_COMMAND = 'xeforge.verifyCompiled';
/** The palette's id: the server's own is registered by vscode-languageclient, so this must differ. */
export const VERIFY_PALETTE_COMMAND = 'xeforge.verifyCompiledKernel';

/**
 * The server command's argument for a document: its URI alone, meaning the version the server has
 * when the command arrives. The editor's version can be ahead of the server's for a moment after a
 * keystroke, and a version the server has not seen yet would be refused as modified.
 */
export function verifyArgument(uri: string): { uri: string } {
  return { uri };
}
