// Bundles the extension (and vscode-languageclient) into one file: dist/extension.js.
import { build } from 'esbuild';

const production = process.argv.includes('--production');
await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
});
