import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The console (docs/console.md). `npm run build:web` writes web/dist, which the API serves at /;
 * `npm run dev:web` serves it with hot reload and passes /api to the API (API_URL, default the
 * npm start address).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  // Every <script>/<link> of index.html, and the csp-nonce meta Mantine reads for its <style>, carry this
  // placeholder; the API replaces it with each response's nonce (api/plugins/console.ts).
  html: { cspNonce: '__AP_CSP_NONCE__' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    // The first chunk (React, Mantine, the shell) is ~700 KB before gzip, ~210 KB after: bench:console
    // measures it against its 250 KB gzip budget, so Vite's 500 KB raw warning says nothing more.
    chunkSizeWarningLimit: 900,
  },
  server: {
    port: Number(process.env.WEB_PORT ?? 5173),
    strictPort: false,
    proxy: { '/api': { target: process.env.API_URL ?? 'http://127.0.0.1:3000' } },
  },
});
